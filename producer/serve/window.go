package serve

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/shmloader/shmloader/producer/plan"
)

type windowKey struct {
	epoch uint64
	part  int
	index int
}

// window is one plan window's rows: blocks[i] holds the transformed kept rows of its
// i-th row group (decoded, or mapped from the cache), in the window's concatenated order.
type window struct {
	key    windowKey
	plan   plan.Window
	blocks []block
	starts []int64 // window row of each block's first row
	order  []loc   // serving order of the rows (nil: as concatenated)
	ready  chan struct{}

	mu      sync.Mutex
	pending int // tasks not done
	err     error

	pins int    // windows.mu: gathers using it now
	used uint64 // windows.mu: last touch, for eviction
	// When the node reads it: the first and last batches that do, as positions (see
	// position); fixed at start.
	first, last uint64

	onReady func() // wakes the gets waiting for room: a ready window can be evicted
}

// loc is where a row of the window lives: row l of block b.
type loc struct{ b, l uint32 }

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
			w.order = w.locate(plan.Perm(int(w.plan.Rows), w.plan.Seed))
		}
		close(w.ready)
		w.onReady()
	}
}

// locate turns window rows into (block, row) pairs, once per window, so that gathers
// index blocks directly.
func (w *window) locate(perm []int32) []loc {
	out := make([]loc, len(perm))
	for i, r := range perm {
		b := 0
		for b+1 < len(w.starts) && w.starts[b+1] <= int64(r) { // few blocks: a scan beats a search
			b++
		}
		out[i] = loc{uint32(b), uint32(int64(r) - w.starts[b])}
	}
	return out
}

func (w *window) isReady() bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// release gives every block's memory back.
func (w *window) release() {
	for i := range w.blocks {
		w.blocks[i].release()
	}
	w.blocks = nil
}

// windows keeps up to capacity windows. Gathers pin a window only while copying from it
// and never hold two pins, so a get that waits for room always gets it.
type windows struct {
	queue    *queue
	blocks   *blockSource
	capacity int
	place    func(windowKey) (first, last uint64) // positions of the batches that read a window
	floor    func() uint64                        // position of the slowest rank's batch

	mu      sync.Mutex
	changed *sync.Cond
	entries map[windowKey]*window
	tick    uint64

	frontier atomic.Uint64 // the latest first-read position of any window started
}

func newWindows(q *queue, blocks *blockSource, capacity int, place func(windowKey) (uint64, uint64), floor func() uint64) *windows {
	c := &windows{queue: q, blocks: blocks, capacity: capacity, place: place, floor: floor, entries: map[windowKey]*window{}}
	c.changed = sync.NewCond(&c.mu)
	return c
}

// get returns window wi of partition part of ep, decoded, and pinned, for the batch at
// position pos: call unpin after copying from it. wt (may be nil) records what the
// caller waits for meanwhile.
func (c *windows) get(ctx context.Context, ep *plan.Epoch, part, wi int, pos uint64, wt *rankWait) (*window, error) {
	key := windowKey{ep.Number, part, wi}
	defer wt.clear()
	c.mu.Lock()
	w := c.entries[key]
	for w == nil && !c.makeRoom(key, pos) {
		if ctx.Err() != nil {
			c.mu.Unlock()
			return nil, ctx.Err()
		}
		wt.set(waitRoom, key)
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
	if !w.isReady() {
		wt.set(waitDecode, key)
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

// unpin ends a gather from w, or a wait for it (a get cancelled before it was ready:
// its err is read only once ready, after the workers wrote it).
func (c *windows) unpin(w *window) {
	c.mu.Lock()
	w.pins--
	if w.isReady() && w.err != nil && w.pins == 0 && c.entries[w.key] == w {
		delete(c.entries, w.key) // a later get retries and reports it again
		w.release()
	}
	c.mu.Unlock()
	c.changed.Broadcast()
}

// prefetch starts decoding window wi of partition part of ep if it is absent and there
// is room.
func (c *windows) prefetch(ep *plan.Epoch, part, wi int) {
	key := windowKey{ep.Number, part, wi}
	c.mu.Lock()
	if c.entries[key] != nil || !c.makeRoom(key, done) {
		c.mu.Unlock()
		return
	}
	w := c.start(ep.Parts[part][wi], key)
	c.tick++
	w.used = c.tick
	c.mu.Unlock()
	c.submit(w, false)
}

// makeRoom makes room for window key if the cache is full, and says whether there is
// room now. It evicts an idle window that every rank is past (least recently used
// first), else the one the node starts reading last (Belady's rule), but only if that is
// after key: a rank running ahead then waits for the slowest instead of evicting the
// windows it still reads. The slowest rank always finds room: besides its own, at most
// one window per partition holds a batch at or before its position, and the capacity is
// above the node's partitions, unless one batch spans more windows than that (tiny row
// groups): so the slowest rank (pos at the floor) may evict any idle window. c.mu is held.
func (c *windows) makeRoom(key windowKey, pos uint64) bool {
	if len(c.entries) < c.capacity {
		return true
	}
	floor := c.floor()
	var past, latest, lru *window
	for _, w := range c.entries {
		if w.pins > 0 || !w.isReady() {
			continue
		}
		if lru == nil || w.used < lru.used {
			lru = w
		}
		switch {
		case w.last < floor:
			if past == nil || w.used < past.used {
				past = w
			}
		case latest == nil || w.first > latest.first:
			latest = w
		}
	}
	victim := past
	if first, _ := c.place(key); victim == nil && latest != nil && latest.first > first {
		victim = latest
	}
	if victim == nil && pos <= floor {
		victim = lru
	}
	if victim == nil {
		return false
	}
	delete(c.entries, victim.key)
	victim.release()
	return true
}

// held counts the windows the slowest rank, at position floor, has yet to read (those
// no rank is past), and the capacity.
func (c *windows) held(floor uint64) (n, capacity int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.entries {
		if w.last >= floor {
			n++
		}
	}
	return n, c.capacity
}

// pending is how many of window key's row groups are not decoded yet, and how many it
// has; ok is false when the window is not in the cache.
func (c *windows) pending(key windowKey) (left, all int, ok bool) {
	c.mu.Lock()
	w := c.entries[key]
	c.mu.Unlock()
	if w == nil {
		return 0, 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending, len(w.plan.RowGroups), true
}

// start registers a new window. c.mu is held.
func (c *windows) start(pw plan.Window, key windowKey) *window {
	w := &window{key: key, plan: pw, ready: make(chan struct{}), pending: len(pw.RowGroups), onReady: c.wake,
		blocks: make([]block, len(pw.RowGroups)), starts: make([]int64, len(pw.RowGroups))}
	w.first, w.last = c.place(key)
	if w.first != done && w.first > c.frontier.Load() {
		c.frontier.Store(w.first) // under c.mu: no lost update
	}
	var at int64
	for i, g := range pw.RowGroups {
		w.starts[i] = at
		at += c.blocks.rows[g]
	}
	c.entries[key] = w
	return w
}

// submit queues the window's row groups.
func (c *windows) submit(w *window, urgent bool) {
	tasks := make([]task, len(w.plan.RowGroups))
	for i, g := range w.plan.RowGroups {
		tasks[i] = task{w: w, block: i, rg: g}
	}
	c.queue.push(tasks, urgent)
}

// wake makes the gets waiting for room look again: a window became ready (so it can be
// evicted) or the context was cancelled. Taking c.mu first means no get is between its
// check and its Wait, so none misses the broadcast.
func (c *windows) wake() {
	c.mu.Lock()
	//lint:ignore SA2001 the empty critical section orders the broadcast after every get's check
	c.mu.Unlock()
	c.changed.Broadcast()
}

// close releases every window; nothing may use them afterwards.
func (c *windows) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.entries {
		w.release() // the workers have stopped: no task writes into a block any more
	}
	c.entries = nil
	c.blocks.close()
}
