package ring

import (
	"runtime"
	"sync/atomic"
	"time"
)

const (
	spinIters = 4000                  // busy re-checks before sleeping (a few microseconds)
	sliceMax  = 50 * time.Millisecond // longest single sleep: bounds how late a death is seen
)

// waiter sleeps until ready() holds. It spins briefly, then sleeps on bell in slices of
// at most sliceMax, announcing itself in waiting so the peer knows to wake it, and calls
// check after every slice (liveness, state). timeout < 0 waits until ready or check fails.
type waiter struct {
	bell, waiting *atomic.Uint32
	check         func() error
}

func (w waiter) wait(ready func() bool, timeout time.Duration) error {
	for i := range spinIters {
		if ready() {
			return nil
		}
		if i%256 == 255 {
			runtime.Gosched()
		}
	}
	var deadline time.Time
	if timeout >= 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		slice := sliceMax
		if timeout >= 0 {
			left := time.Until(deadline)
			if left <= 0 {
				if err := w.check(); err != nil {
					return err // a dead peer is reported as such, even at timeout 0
				}
				return ErrTimeout
			}
			slice = min(slice, left)
		}
		b := w.bell.Load()
		w.waiting.Store(1) // seq-cst: pairs with the peer's counter store, then load of waiting
		if ready() {
			w.waiting.Store(0)
			return nil
		}
		futexWait(w.bell, b, slice)
		w.waiting.Store(0)
		if ready() {
			return nil
		}
		if err := w.check(); err != nil {
			return err
		}
	}
}
