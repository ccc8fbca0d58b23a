package ring

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Shared futex operations: the word lives in a file mapping used by several processes,
// so FUTEX_PRIVATE_FLAG must not be set.
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps while *addr == val, for at most d. Spurious wake-ups are fine: callers
// re-check their condition.
func futexWait(addr *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes every waiter on addr.
func futexWake(addr *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp, math.MaxInt32, 0, 0, 0)
}

// ring wakes the peer sleeping on bell, if it said it might be.
func ring(bell, waiting *atomic.Uint32) {
	if waiting.Load() != 0 { // seq-cst, after the caller's seq-cst counter store
		bell.Add(1)
		futexWake(bell)
	}
}
