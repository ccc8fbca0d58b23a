package serve

import (
	"context"
	"sync"

	"github.com/shmloader/shmloader/producer/plan"
)

type windowKey struct {
	epoch uint64
	part  int
	index int
}

// window is one plan window's decoded outputs: bufs[t] holds tensor t of all its kept
// rows, row-major, row groups in plan order.
type window struct {
	key   windowKey
	plan  plan.Window
	bufs  [][]byte
	perm  []int32 // serving order of the rows (nil: as decoded)
	ready chan struct{}

	mu      sync.Mutex
	pending int // tasks not done
	err     error

	pins int    // cache.mu: gathers using it now
	used uint64 // cache.mu: last touch, for eviction

	onReady func() // wakes the gets waiting for room: a ready window can be evicted
}

// done records one finished task; the last one makes the window ready.
func (w *window) done(err error) {
	w.mu.Lock()
	if err != nil && w.err == nil {
		w.err = err
	}
	w.pending--
	last := w.pending == 0
	w.mu.Unlock()
	if last {
		if w.err == nil && w.plan.Shuffled {
			w.perm = plan.Perm(int(w.plan.Rows), w.plan.Seed)
		}
		close(w.ready)
		w.onReady()
	}
}

func (w *window) isReady() bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// cache keeps up to capacity windows. Gathers pin a window only while copying from it
// and never hold two pins, so a get that waits for room always gets it.
type cache struct {
	src      *source
	queue    *queue
	rows     []int64 // kept rows per row group (the plan's input)
	capacity int
	bufRows  int64 // rows every buffer set holds: the largest window

	mu      sync.Mutex
	changed *sync.Cond
	entries map[windowKey]*window
	spare   [][][]byte // buffer sets of evicted windows
	maps    [][]byte   // every buffer set's mapping, unmapped by close
	tick    uint64
}

func newCache(src *source, q *queue, rows []int64, capacity int, bufRows int64) *cache {
	c := &cache{src: src, queue: q, rows: rows, capacity: capacity, bufRows: bufRows, entries: map[windowKey]*window{}}
	c.changed = sync.NewCond(&c.mu)
	return c
}

// get returns window wi of partition part of ep, decoded, and pinned: call unpin after
// copying from it.
func (c *cache) get(ctx context.Context, ep *plan.Epoch, part, wi int) (*window, error) {
	key := windowKey{ep.Number, part, wi}
	c.mu.Lock()
	w := c.entries[key]
	for w == nil && !c.makeRoom() {
		if ctx.Err() != nil {
			c.mu.Unlock()
			return nil, ctx.Err()
		}
		c.changed.Wait()
		w = c.entries[key]
	}
	fresh := w == nil
	if fresh {
		w = c.start(ep.Parts[part][wi], key)
	}
	w.pins++
	c.tick++
	w.used = c.tick
	c.mu.Unlock()
	if fresh {
		c.submit(w, true)
	} else if !w.isReady() {
		c.queue.promote(w)
	}
	select {
	case <-w.ready:
	case <-ctx.Done():
		c.unpin(w)
		return nil, ctx.Err()
	}
	if w.err != nil {
		c.unpin(w)
		return nil, w.err
	}
	return w, nil
}

func (c *cache) unpin(w *window) {
	c.mu.Lock()
	w.pins--
	if w.err != nil && w.pins == 0 {
		delete(c.entries, w.key) // a later get retries and reports it again
	}
	c.mu.Unlock()
	c.changed.Broadcast()
}

// prefetch starts decoding window wi of partition part of ep if it is absent and there
// is room.
func (c *cache) prefetch(ep *plan.Epoch, part, wi int) {
	key := windowKey{ep.Number, part, wi}
	c.mu.Lock()
	if c.entries[key] != nil || !c.makeRoom() {
		c.mu.Unlock()
		return
	}
	w := c.start(ep.Parts[part][wi], key)
	c.tick++
	w.used = c.tick
	c.mu.Unlock()
	c.submit(w, false)
}

// makeRoom evicts the least recently used idle window if the cache is full, and says
// whether there is room now. c.mu is held.
func (c *cache) makeRoom() bool {
	if len(c.entries) < c.capacity {
		return true
	}
	var victim *window
	for _, w := range c.entries {
		if w.pins == 0 && w.isReady() && (victim == nil || w.used < victim.used) {
			victim = w
		}
	}
	if victim == nil {
		return false
	}
	delete(c.entries, victim.key)
	if victim.bufs != nil {
		c.spare = append(c.spare, victim.bufs)
	}
	return true
}

// submit queues the window's row groups.
func (c *cache) submit(w *window, urgent bool) {
	tasks := make([]task, len(w.plan.RowGroups))
	var first int64
	for i, g := range w.plan.RowGroups {
		tasks[i] = task{w: w, rg: c.src.ds.RowGroups[g], kept: c.rows[g], first: first}
		first += c.rows[g]
	}
	c.queue.push(tasks, urgent)
}

// wake makes the gets waiting for room look again: a window became ready (so it can be
// evicted) or the context was cancelled. Taking c.mu first means no get is between its
// check and its Wait, so none misses the broadcast.
func (c *cache) wake() {
	c.mu.Lock()
	c.mu.Unlock() //nolint:staticcheck // an empty critical section orders the broadcast after every check
	c.changed.Broadcast()
}
