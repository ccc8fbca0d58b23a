package serve

import (
	"fmt"
	"sync"
	"time"
)

// Stall notes: why a rank has no batch now, in words. Each rank loop records what it
// waits for (rankWait); every second explain turns that into a note (rank 1 has had no
// trainer for 42 s, decoding is behind, a read is slow) that the ring header carries to
// the trainer (its Timeout says it), `shmloader status` shows and the progress line
// prints.

// stallAfter is how long a rank waits before it is said to stall.
const stallAfter = time.Second

type waitKind int

const (
	waitNone   waitKind = iota
	waitRoom            // for room in the window cache, which slower ranks hold
	waitDecode          // for a window's row groups to be decoded
)

// rankWait is what one rank loop waits for. The loop sets it; explain reads it.
type rankWait struct {
	mu    sync.Mutex
	kind  waitKind
	since time.Time // when the wait began
	key   windowKey // the window it needs
}

// set records a wait for key (a nil w records nothing).
func (w *rankWait) set(k waitKind, key windowKey) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.kind == waitNone {
		w.since = time.Now()
	}
	w.kind, w.key = k, key
	w.mu.Unlock()
}

// clear records that the wait ended.
func (w *rankWait) clear() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.kind = waitNone
	w.mu.Unlock()
}

func (w *rankWait) get() (waitKind, time.Time, windowKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.kind, w.since, w.key
}

// notes are the stall notes last published, per rank, for observers.
type notes struct {
	mu   sync.Mutex
	text []string
}

func (n *notes) set(r int, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.text == nil {
		return
	}
	n.text[r] = text
}

func (n *notes) get(r int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r >= len(n.text) {
		return ""
	}
	return n.text[r]
}

// explainer is explain's memory between rounds: when each rank's trainer last took a
// batch, and each worker thread's CPU time.
type explainer struct {
	released []uint64    // per rank: slots released at the last change
	took     []time.Time // per rank: when that changed
	cpu      map[int]cpuSample
}

// explainUntil publishes every rank's stall note once a second until done is closed,
// then clears them.
func (s *server) explainUntil(done <-chan struct{}) {
	ex := &explainer{released: make([]uint64, len(s.prods)), took: make([]time.Time, len(s.prods)), cpu: map[int]cpuSample{}}
	s.notes.mu.Lock()
	s.notes.text = make([]string, len(s.prods))
	s.notes.mu.Unlock()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			for r, p := range s.prods {
				p.SetStall("")
				s.notes.set(r, "")
			}
			return
		case now := <-tick.C:
			s.explain(ex, now)
		}
	}
}

// explain publishes each rank's note now.
func (s *server) explain(ex *explainer, now time.Time) {
	for r, p := range s.prods {
		if rel := p.Released(); rel != ex.released[r] || ex.took[r].IsZero() {
			ex.released[r], ex.took[r] = rel, now
		}
	}
	ex.sampleCPU(s.workers.threads(), now)
	for r, p := range s.prods {
		note := s.why(ex, r, now)
		p.SetStall(note)
		s.notes.set(r, note)
	}
}

// why is rank r's stall note: "" unless it has waited for its next batch for stallAfter.
func (s *server) why(ex *explainer, r int, now time.Time) string {
	kind, since, key := s.waits[r].get()
	if kind == waitNone || now.Sub(since) < stallAfter || !s.trainer[r].Load() {
		return "" // nobody to tell: a trainer that attaches reads the note a second later
	}
	if kind == waitDecode {
		return fmt.Sprintf("rank %d waits: %s", r, s.decodeNote(ex, key, now))
	}
	f, pos := s.slowest()
	if f < 0 || f == r {
		return fmt.Sprintf("rank %d waits for room among the decoded windows for %s", r, secs(now.Sub(since)))
	}
	held, capacity := s.windows.held(pos)
	return fmt.Sprintf("rank %d waits: %s (it holds %d of the %d decoded windows)", r, s.holdingBack(ex, f, now), held, capacity)
}

// slowest is the rank at the floor (the slowest rank the others wait for) and its
// position; -1 if none.
func (s *server) slowest() (int, uint64) {
	f := s.floor()
	for r := range s.prods {
		if s.at[r].Load() == f && f != done {
			return r, f
		}
	}
	return -1, f
}

// holdingBack says why rank f, the slowest, is slow.
func (s *server) holdingBack(ex *explainer, f int, now time.Time) string {
	p := s.prods[f]
	switch {
	case !s.trainer[f].Load():
		return fmt.Sprintf("rank %d has had no trainer for %s", f, secs(now.Sub(s.ringsAt)))
	case p.Occupancy() >= uint64(p.Geometry().SlotCount):
		return fmt.Sprintf("rank %d's trainer (pid %d) has taken no batch for %s (stopped, or slower than the others)",
			f, p.ConsumerPID(), secs(now.Sub(ex.took[f])))
	}
	if kind, since, key := s.waits[f].get(); kind == waitDecode && now.Sub(since) >= stallAfter {
		return fmt.Sprintf("rank %d is behind, itself waiting: %s", f, s.decodeNote(ex, key, now))
	}
	return fmt.Sprintf("rank %d is behind", f)
}

// decodeNote says why window key is not decoded yet.
func (s *server) decodeNote(ex *explainer, key windowKey, now time.Time) string {
	left, all, _ := s.windows.pending(key)
	busy := s.workers.on(key)
	if len(busy) == 0 {
		return fmt.Sprintf("its next window's %d row groups wait in the decode queue: decoding is the slower side (%s, all busy); "+
			"more workers (--workers) or the cache (cache.dir) would help", left, workersText(s.workers.count()))
	}
	b := busy[0]
	for _, o := range busy[1:] {
		if o.since.Before(b.since) {
			b = o
		}
	}
	rg := s.src.ds.RowGroups[b.rg]
	if d := now.Sub(b.since); d >= 2*stallAfter {
		what := "decoding"
		if ex.ioBound(b.tid) {
			what = "reading (waiting for storage)"
		}
		return fmt.Sprintf("%s %s row group %d for %s (%d of its next window's %d row groups left)", what, rg.File.Path, rg.Index, secs(d), left, all)
	}
	return fmt.Sprintf("decoding its next window (%d of %d row groups left, %s on it): decoding is the slower side", left, all, workersText(len(busy)))
}

func workersText(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}

// secs is a duration in whole seconds, as people read waits.
func secs(d time.Duration) string {
	return fmt.Sprintf("%.0f s", d.Seconds())
}
