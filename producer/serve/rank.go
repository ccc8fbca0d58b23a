package serve

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/shmloader/shmloader/producer/plan"
	"github.com/shmloader/shmloader/ring"
)

// serveRank fills one ring: batches in step order, an END_OF_EPOCH marker after each
// epoch, END_OF_STREAM after the last; a consumer's seek moves it.
func (s *server) serveRank(ctx context.Context, r int, p *ring.Producer, attached func() (bool, error)) error {
	// base: the global batch this epoch started at (nonzero only in an epoch resumed
	// from a state saved under another world size).
	epoch, step, base := s.opt.StartEpoch, s.opt.StartStep, s.opt.StartBase
	var dataEnd uint64
	var left time.Time // when the trainer was last seen gone, while the ring is full
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		slot, err := p.Acquire(100 * time.Millisecond)
		if errors.Is(err, ring.ErrTimeout) {
			if err := s.orphaned(r, p, attached, &left); err != nil {
				return err
			}
			continue
		}
		left = time.Time{}
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		if e, st, ok := p.PollSeek(); ok {
			epoch, step, base = e, st, s.soughtBase(r, p)
			s.logf("rank %d: consumer seeks to epoch %d step %d%s", r, e, st, fromBase(base))
		}
		switch {
		case s.cfg.Epochs != 0 && epoch >= s.cfg.Epochs:
			p.PublishMarker(slot, ring.FlagEndOfStream, epoch)
			s.at[r].Store(done)
			s.windows.wake() // the floor moved past this rank
			e, st, sought, err := s.drain(ctx, p, dataEnd, attached)
			if err != nil {
				return err
			}
			if !sought {
				s.at[r].Store(done)
				p.SetState(ring.StateFinished)
				s.stats.rank(r).done.Store(true)
				return nil
			}
			epoch, step, base = e, st, s.soughtBase(r, p) // a trainer resuming near the end: serve on from there
			s.logf("rank %d: consumer seeks to epoch %d step %d%s", r, e, st, fromBase(base))
			continue
		case step >= s.plan.StepsFrom(r, base):
			p.PublishMarker(slot, ring.FlagEndOfEpoch, epoch)
			s.stats.rank(r).epochDone(epoch)
			epoch, step, base = epoch+1, 0, 0
			continue
		}
		g := s.plan.GlobalFrom(r, base, step)
		s.at[r].Store(position(epoch, g))
		rows, err := s.fill(ctx, slot, r, epoch, g)
		if err != nil {
			return err
		}
		p.PublishFrom(slot, epoch, step, base, rows)
		dataEnd = p.Published()
		s.stats.rank(r).published(epoch, step, rows, s.batchBytes(rows))
		step++
	}
}

// fill gathers global batch g of epoch into slot and returns its rows.
func (s *server) fill(ctx context.Context, slot *ring.Slot, r int, epoch, g uint64) (int, error) {
	ep := s.plan.Epoch(epoch)
	at := 0
	for _, sp := range s.plan.Spans(ep, g) {
		w, err := s.windows.get(ctx, ep, sp.Part, sp.Window, position(epoch, g), &s.waits[r])
		if err != nil {
			return 0, err
		}
		s.gather(slot, w, sp.From, sp.To, at)
		s.windows.unpin(w)
		at += int(sp.To - sp.From)
	}
	s.prefetchAfter(epoch, g)
	return at, nil
}

// prefetchAfter queues the next `prefetch` windows this node starts reading after global
// batch g of epoch e, in the order of their first use (plan.NodeOrder), into the next
// epoch if need be. The partitions' windows end at staggered batches (plan/doc.go), so a
// few ahead keep the workers busy.
func (s *server) prefetchAfter(e, g uint64) {
	order := s.order(e)
	i := sort.Search(len(order.windows), func(i int) bool { return order.windows[i].First > g }) - 1
	for range s.cfg.Prefetch {
		if i++; i >= len(order.windows) {
			if e++; s.cfg.Epochs != 0 && e >= s.cfg.Epochs {
				return
			}
			order, i = s.order(e), 0
			if len(order.windows) == 0 {
				return
			}
		}
		wr := order.windows[i]
		s.windows.prefetch(s.plan.Epoch(e), wr.Part, wr.Index)
	}
}

func (s *server) batchBytes(rows int) int64 {
	var n int64
	for _, sz := range s.src.rowSize {
		n += int64(rows * sz)
	}
	return n
}

// drain waits until the consumer has released everything, or has released every batch
// and gone (one that read only its epochs never takes the end-of-stream marker). The ring
// stays running meanwhile, so a trainer that restarts from a checkpoint near the end can
// still seek: drain then returns the position sought.
func (s *server) drain(ctx context.Context, p *ring.Producer, dataEnd uint64, attached func() (bool, error)) (epoch, step uint64, sought bool, err error) {
	var deadline time.Time
	if s.opt.DrainTimeout > 0 {
		deadline = time.Now().Add(s.opt.DrainTimeout)
	}
	for {
		if e, st, ok := p.PollSeek(); ok {
			return e, st, true, nil
		}
		if p.Drained() {
			return 0, 0, false, nil
		}
		if p.Released() >= dataEnd {
			if on, err := attached(); err == nil && !on {
				return 0, 0, false, nil
			}
		}
		if ctx.Err() != nil {
			return 0, 0, false, ctx.Err()
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return 0, 0, false, &Ended{Kind: ring.StopAbandoned, Reason: fmt.Sprintf("rank %d: the consumer did not read the rest of the stream within %v (--drain-timeout)", p.Geometry().Rank, s.opt.DrainTimeout)}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// orphaned gives up on rank r when, with --drain-timeout set, the trainer that was
// reading its ring has been gone that long and none has attached since. Without the
// timeout a new trainer may attach (and seek) at any time. A rank no trainer ever
// attached to waits for its first one for ever: trainers may start after serve. One that
// attached counts even if it died before releasing a batch (it announced its pid in the
// ring header, which only a clean detach clears, and watchTrainers saw it if it lived 20
// ms).
func (s *server) orphaned(r int, p *ring.Producer, attached func() (bool, error), left *time.Time) error {
	if s.opt.DrainTimeout <= 0 {
		return nil
	}
	if !s.attachedOnce(r) {
		return nil // no trainer has come to this ring yet
	}
	if on, err := attached(); err != nil || on {
		*left = time.Time{}
		return nil
	}
	if left.IsZero() {
		*left = time.Now()
		s.logf("rank %d: its trainer is gone; waiting up to %v (--drain-timeout) for another to attach", r, s.opt.DrainTimeout)
	}
	if time.Since(*left) > s.opt.DrainTimeout {
		return &Ended{Kind: ring.StopAbandoned, Reason: fmt.Sprintf("rank %d: its trainer left at step %d and none attached within %v (--drain-timeout)",
			r, s.stats.rank(r).step.Load(), s.opt.DrainTimeout)}
	}
	return nil
}

// soughtBase is the base of the seek p last returned, checked: the consumer wrote it, and
// the plan serves epochs starting at most at ElasticLimit.
func (s *server) soughtBase(r int, p *ring.Producer) uint64 {
	b, limit := p.SoughtBase(), s.plan.ElasticLimit()
	if b > limit {
		s.logf("rank %d: the consumer sought an epoch starting at global batch %d, past the last one an epoch may start at (%d); serving from %d", r, b, limit, limit)
		return limit
	}
	return b
}

// fromBase describes an epoch's start in a log line: nothing for its first batch.
func fromBase(base uint64) string {
	if base == 0 {
		return ""
	}
	return fmt.Sprintf(" of the epoch started at global batch %d", base)
}

// position orders the node's batches across epochs: epoch, then global batch.
func position(epoch, g uint64) uint64 { return epoch<<40 | min(g, 1<<40-1) }

// done is the position of a rank that fills no more batches.
const done = ^uint64(0)

// place says when the node reads window k: the positions of the first and last batches
// that do (in an epoch started at 0; a window it does not read is read never).
func (s *server) place(k windowKey) (first, last uint64) {
	o := s.order(k.epoch)
	i, ok := o.index[[2]int{k.part, k.index}]
	if !ok {
		return done, done
	}
	return position(k.epoch, o.windows[i].First), position(k.epoch, o.windows[i].Last)
}

// floor is the position of the slowest rank: no rank reads a batch before it again
// (unless its trainer seeks). A rank whose trainer left does not hold the others back
// (one that has not attached yet does); when a trainer attaches again, what it needs is
// decoded again.
func (s *server) floor() uint64 {
	f := done
	for r, p := range s.prods {
		// Attached now; or never yet: no pid in the header (a consumer stores it at
		// attach, and only a clean detach clears it) and nothing released.
		if s.trainer[r].Load() || (p.ConsumerPID() == 0 && p.Released() == 0) {
			f = min(f, s.at[r].Load())
		}
	}
	return f
}

// nodeOrder is the order in which this node first reads the windows of one epoch.
type nodeOrder struct {
	windows []plan.WindowRef
	index   map[[2]int]int // (partition, window) → position in windows
	rgFirst map[int]uint64 // row group → first global batch that reads it
}

// order returns epoch e's node order (an epoch started at 0), computing it once per
// epoch; a few recent epochs are kept.
func (s *server) order(e uint64) *nodeOrder {
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	if o := s.orders[e]; o != nil {
		return o
	}
	if len(s.orders) >= 4 {
		clear(s.orders)
	}
	ep := s.plan.Epoch(e)
	o := &nodeOrder{windows: s.plan.NodeOrder(ep, 0), index: map[[2]int]int{}, rgFirst: map[int]uint64{}}
	for i, w := range o.windows {
		o.index[[2]int{w.Part, w.Index}] = i
		for _, g := range ep.Parts[w.Part][w.Index].RowGroups {
			o.rgFirst[g] = w.First
		}
	}
	s.orders[e] = o
	return o
}

// watchTrainers reads, for every rank, whether a trainer holds its consumer lock.
func (s *server) watchTrainers(attached []func() (bool, error)) {
	moved := false
	for r, f := range attached {
		on, err := f()
		// Cannot tell: count it, as floor must not skip a reader. One that said the job is
		// done reads no more, though views of its batches may hold its lock: it must not
		// hold the other ranks back.
		v := (on || err != nil) && !s.prods[r].Done()
		moved = s.trainer[r].Swap(v) != v || moved
		if on {
			s.hadTrainer[r].Store(true)
		}
	}
	if moved {
		// The floor moved: a rank waiting for room behind a trainer that just left must
		// look again, as no window may change state (and wake it) for as long as it waits.
		s.windows.wake()
	}
}

// watchTrainersUntil refreshes s.trainer every 20 ms until done is closed, and ends the
// run (stop) when the job is over without its last epoch (lifetime).
func (s *server) watchTrainersUntil(attached []func() (bool, error), done <-chan struct{}, stop context.CancelCauseFunc) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	lt := lifetime{start: s.ringsAt}
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			s.watchTrainers(attached)
			if end := s.checkLifetime(&lt, now); end != nil {
				stop(end)
				s.windows.wake()
				return
			}
		}
	}
}
