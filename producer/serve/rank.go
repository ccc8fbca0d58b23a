package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shmloader/shmloader/ring"
)

// serveRank fills one ring: batches in step order, an END_OF_EPOCH marker after each
// epoch, END_OF_STREAM after the last; a consumer's seek moves it.
func (s *server) serveRank(ctx context.Context, r int, p *ring.Producer, attached func() (bool, error)) error {
	epoch, step := s.opt.StartEpoch, s.opt.StartStep
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
			epoch, step = e, st
			s.logf("rank %d: consumer seeks to epoch %d step %d", r, e, st)
		}
		switch {
		case s.cfg.Epochs != 0 && epoch >= s.cfg.Epochs:
			p.PublishMarker(slot, ring.FlagEndOfStream, epoch)
			e, st, sought, err := s.drain(ctx, p, dataEnd, attached)
			if err != nil {
				return err
			}
			if !sought {
				p.SetState(ring.StateFinished)
				s.stats.rank(r).done.Store(true)
				return nil
			}
			epoch, step = e, st // a trainer resuming near the end: serve on from there
			s.logf("rank %d: consumer seeks to epoch %d step %d", r, e, st)
			continue
		case step >= s.plan.Steps(r):
			p.PublishMarker(slot, ring.FlagEndOfEpoch, epoch)
			s.stats.rank(r).epochDone(epoch)
			epoch, step = epoch+1, 0
			continue
		}
		rows, err := s.fill(ctx, slot, r, epoch, step)
		if err != nil {
			return err
		}
		p.Publish(slot, epoch, step, rows)
		dataEnd = p.Published()
		s.stats.rank(r).published(epoch, step, rows, s.batchBytes(rows))
		step++
	}
}

// fill gathers batch (epoch, step) of rank r into slot and returns its rows.
func (s *server) fill(ctx context.Context, slot *ring.Slot, r int, epoch, step uint64) (int, error) {
	g := s.plan.Global(r, step)
	ep := s.plan.Epoch(epoch)
	at := 0
	last := -1
	for _, sp := range s.plan.Spans(ep, g) {
		w, err := s.cache.get(ctx, ep, sp.Window)
		if err != nil {
			return 0, err
		}
		s.gather(slot, w, sp.From, sp.To, at)
		s.cache.unpin(w)
		at += int(sp.To - sp.From)
		last = sp.Window
	}
	s.prefetchAfter(epoch, last)
	return at, nil
}

// prefetchAfter queues the windows this node needs after window wi of epoch e.
func (s *server) prefetchAfter(e uint64, wi int) {
	for range s.cfg.Prefetch {
		ep := s.plan.Epoch(e)
		_, last := s.plan.NodeWindows(ep)
		if wi++; wi > last {
			if e++; s.cfg.Epochs != 0 && e >= s.cfg.Epochs {
				return
			}
			ep = s.plan.Epoch(e)
			wi, _ = s.plan.NodeWindows(ep)
		}
		s.cache.prefetch(ep, wi)
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
			return 0, 0, false, fmt.Errorf("rank %d: the consumer did not read the rest of the stream within %v", p.Geometry().Rank, s.opt.DrainTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// orphaned gives up on rank r when, with --drain-timeout set, the trainer that was
// reading its ring has been gone that long and none has attached since. Without the
// timeout a new trainer may attach (and seek) at any time.
func (s *server) orphaned(r int, p *ring.Producer, attached func() (bool, error), left *time.Time) error {
	if s.opt.DrainTimeout <= 0 || p.Released() == 0 {
		return nil // no timeout, or no trainer has read from this ring yet
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
		return fmt.Errorf("rank %d: its trainer left at step %d and none attached within %v (--drain-timeout)",
			r, s.stats.rank(r).step.Load(), s.opt.DrainTimeout)
	}
	return nil
}
