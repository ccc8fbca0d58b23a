package ring

import (
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// SpinFor is how long a consumer busy-polls before it sleeps on the futex. Waking a sleeper
// costs the waking side a system call and, on virtual machines, an inter-processor
// interrupt worth tens of microseconds; a batch that arrives within the spin costs
// neither. A longer spin buys throughput with CPU taken from everything else on the host.
// $SHMLOADER_SPIN_US (0..1000000) overrides the default; bench/RESULTS.md has the
// measurements behind it.
var SpinFor = spinFromEnv(os.Getenv("SHMLOADER_SPIN_US"))

const defaultSpin = 100 * time.Microsecond

// producerSpin caps the producer's spin on a full ring. A full ring means the trainer is
// the slower side and already holds batches to work on, so nothing waits on the
// producer: spinning there only takes CPU from the trainers and the decode workers
// (measured: a warm serve feeding trainers with a 6 ms step spent 0.61 CPU-s per 1M rows
// spinning 100 us per batch, 0.44 without the step). The cost of sleeping instead is one
// futex wake per release on the trainer's side while the producer sleeps.
const producerSpin = 5 * time.Microsecond

// spinFromEnv parses $SHMLOADER_SPIN_US; anything but a whole number of microseconds in
// 0..1000000 gives the default, as in the C library.
func spinFromEnv(v string) time.Duration {
	us, err := strconv.ParseInt(v, 10, 64)
	if err != nil || us < 0 || us > 1_000_000 {
		return defaultSpin
	}
	return time.Duration(us) * time.Microsecond
}

const sliceMax = 50 * time.Millisecond // longest single sleep: bounds how late a death is seen

// waiter sleeps until ready() holds. It spins briefly, then sleeps on bell in slices of
// at most sliceMax, announcing itself in waiting so the peer knows to wake it, and calls
// check after every slice (liveness, state). timeout < 0 waits until ready or check fails.
type waiter struct {
	bell, waiting *atomic.Uint32
	check         func() error
	spin          time.Duration // busy-poll at most this long before sleeping
}

func (w waiter) wait(ready func() bool, timeout time.Duration) error {
	spinStart := time.Now()
	for i := 0; ; i++ {
		if ready() {
			return nil
		}
		if i%128 == 127 {
			if time.Since(spinStart) >= w.spin || timeout == 0 {
				break
			}
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
