package serve

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestDecodeCPUCountsCPUNotWallTime: time a decode spends asleep (as in I/O) counts
// nothing, and decodes that share one core count at most that core, however many run
// at once (summed wall time counted each of them the whole time).
func TestDecodeCPUCountsCPUNotWallTime(t *testing.T) {
	var s stats
	s.decodeCPU(func() error { time.Sleep(100 * time.Millisecond); return nil })
	if got := time.Duration(s.decodeCPUNs.Load()); got > 20*time.Millisecond {
		t.Errorf("a decode asleep for 100 ms counted %v of CPU", got)
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s.decodeCPUNs.Store(0)
	const decodes, spin = 4, 100 * time.Millisecond
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wall time.Duration
	start := time.Now()
	for range decodes {
		wg.Go(func() {
			t0 := time.Now()
			s.decodeCPU(func() error {
				for time.Since(t0) < spin {
				}
				return nil
			})
			mu.Lock()
			wall += time.Since(t0)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := time.Duration(s.decodeCPUNs.Load())
	t.Logf("%d decodes on 1 core for %v: %v of CPU, %v of wall time summed", decodes, elapsed, cpu, wall)
	if cpu <= 0 || cpu > elapsed+elapsed/10 {
		t.Errorf("%d decodes on 1 core for %v counted %v of CPU", decodes, elapsed, cpu)
	}
}

// BenchmarkDecodeCPU is what measuring a decode's CPU time adds to it: the lock and two
// clock reads.
func BenchmarkDecodeCPU(b *testing.B) {
	var s stats
	nop := func() error { return nil }
	for b.Loop() {
		s.decodeCPU(nop)
	}
}
