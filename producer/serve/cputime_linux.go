package serve

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time (user and system) of the calling OS thread: a difference of
// two readings means something only on one thread, so the goroutine must be locked to it.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
