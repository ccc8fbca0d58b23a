package serve

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shmloader/shmloader/ring"
)

// stats are the counters behind the status line; written by the rank loops and workers.
type stats struct {
	decodedRows, cachedRows atomic.Int64
	decodeCPUNs             atomic.Int64 // CPU time decode workers spent decoding (cache misses)
	written                 atomic.Int64 // cache entries this run committed
	ranks                   []rankStats
}

type rankStats struct {
	rows, bytes, batches atomic.Int64
	epoch, step          atomic.Uint64 // position of the last published batch
	waitSamples, samples atomic.Int64  // consumer waiting for data, sampled
	done                 atomic.Bool   // every batch served and read
}

func (s *stats) decoded(rows int64)    { s.decodedRows.Add(rows) }
func (s *stats) cached(rows int64)     { s.cachedRows.Add(rows) }
func (s *stats) rank(r int) *rankStats { return &s.ranks[r] }

// decodeCPU runs decode with the goroutine locked to its OS thread and adds the thread's
// CPU time during it (user and system, CLOCK_THREAD_CPUTIME_ID) to decodeCPUNs. Wall time
// would also count waiting for I/O and for a core: summed over workers it showed 2.4
// cores decoding on a 2-core host. The lock and two clock reads cost about 1.4 µs
// (BenchmarkDecodeCPU), against tens of milliseconds to decode one of the demo's row groups.
func (s *stats) decodeCPU(decode func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	defer func() { s.decodeCPUNs.Add(int64(threadCPU() - start)) }()
	return decode()
}

func (r *rankStats) published(epoch, step uint64, rows int, bytes int64) {
	r.rows.Add(int64(rows))
	r.bytes.Add(bytes)
	r.batches.Add(1)
	r.epoch.Store(epoch)
	r.step.Store(step + 1)
}

func (r *rankStats) epochDone(epoch uint64) { r.epoch.Store(epoch + 1); r.step.Store(0) }

// sample notes whether each ring's consumer is waiting for data: attached, and every
// published batch released.
func (s *server) sample(prods []*ring.Producer) {
	for r, p := range prods {
		st := s.stats.rank(r)
		if !s.trainer[r].Load() {
			continue
		}
		st.samples.Add(1)
		if p.Occupancy() == 0 {
			st.waitSamples.Add(1)
		}
	}
}

// ringStatus is one ring in a status record (the "rings" attribute): what serve has
// published (epoch, step of steps), its occupancy, whether a trainer is attached, and
// the share of samples in which it waited for data.
type ringStatus struct {
	Rank      int     `json:"rank"`
	Epoch     uint64  `json:"epoch"`
	Step      uint64  `json:"step"`
	Steps     uint64  `json:"steps"`
	Occupancy uint64  `json:"occupancy"`
	Slots     uint32  `json:"slots"`
	Trainer   bool    `json:"trainer"`
	WaitPct   float64 `json:"wait_pct"`
	Done      bool    `json:"done"`
	Waits     string  `json:"waits,omitempty"` // the stall note: why it has no batch
}

// reporter logs a status line every period and samples the rings every 10 ms for it.
func (s *server) reporter(prods []*ring.Producer, period time.Duration, done <-chan struct{}) {
	if period <= 0 || !s.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	last, lastRows, lastBytes, lastDec := time.Now(), int64(0), int64(0), int64(0)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		s.sample(prods)
		if time.Since(last) < period {
			continue
		}
		now := time.Now()
		dt := now.Sub(last).Seconds()
		var rows, bytes int64
		var b strings.Builder
		rings := make([]ringStatus, len(prods))
		for r, p := range prods {
			st := s.stats.rank(r)
			rows += st.rows.Load()
			bytes += st.bytes.Load()
			wait := 0.0
			if n := st.samples.Swap(0); n > 0 {
				wait = 100 * float64(st.waitSamples.Swap(0)) / float64(n)
			}
			rings[r] = ringStatus{Rank: r, Epoch: st.epoch.Load(), Step: st.step.Load(), Steps: s.plan.Steps(r),
				Occupancy: p.Occupancy(), Slots: p.Geometry().SlotCount, Trainer: s.trainer[r].Load(),
				WaitPct: wait, Done: st.done.Load(), Waits: s.notes.get(r)}
			switch {
			case st.done.Load():
				fmt.Fprintf(&b, " | r%d done", r)
			case !s.trainer[r].Load():
				fmt.Fprintf(&b, " | r%d e%d %d/%d ring %d/%d no trainer", r, st.epoch.Load(), st.step.Load(),
					s.plan.Steps(r), p.Occupancy(), p.Geometry().SlotCount)
			default:
				fmt.Fprintf(&b, " | r%d e%d %d/%d ring %d/%d wait %.0f%%", r, st.epoch.Load(), st.step.Load(),
					s.plan.Steps(r), p.Occupancy(), p.Geometry().SlotCount, wait)
			}
		}
		for r := range prods {
			if note := s.notes.get(r); note != "" {
				b.WriteString("; " + note)
			}
		}
		dec := s.stats.decodedRows.Load()
		rowsPS, mbPS, decPS := float64(rows-lastRows)/dt, float64(bytes-lastBytes)/dt/1e6, float64(dec-lastDec)/dt
		s.log.Info(fmt.Sprintf("%.0f rows/s %.1f MB/s decode %.0f rows/s%s%s", rowsPS, mbPS, decPS, s.cacheStatus(), b.String()),
			"rows_per_s", rowsPS, "mb_per_s", mbPS, "decoded_rows_per_s", decPS, "rings", rings)
		last, lastRows, lastBytes, lastDec = now, rows, bytes, dec
	}
}
