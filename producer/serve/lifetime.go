package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/ring"
)

// Ended is why a run ended before every rank read its last epoch. Run returns it, serve
// logs it, and every trainer's ProducerGone carries it (the rings' stop reason).
type Ended struct {
	Kind   uint32 // ring.Stop*
	Reason string
}

func (e *Ended) Error() string { return e.Reason }

// Clean reports whether the job ended as its trainers or its operator asked: a signal,
// a trainer's done, or every trainer gone for the detach grace (serve exits 0).
func (e *Ended) Clean() bool {
	return e.Kind == ring.StopSignal || e.Kind == ring.StopDone || e.Kind == ring.StopIdle
}

// stopReason is what the rings say about how the run ended: nil when every rank
// finished its stream.
func stopReason(runCtx context.Context) *Ended {
	cause := context.Cause(runCtx)
	var e *Ended
	switch {
	case cause == nil:
		return nil
	case errors.As(cause, &e):
		return e
	case errors.Is(cause, context.Canceled):
		return &Ended{Kind: ring.StopSignal, Reason: "stopped"}
	}
	reason := cause.Error()
	if hint := dataset.Remedy(cause); hint != "" {
		reason += "; " + hint
	}
	return &Ended{Kind: ring.StopError, Reason: reason}
}

// lifetime decides when the job is over besides its last epoch (RELIABILITY.md, "Waits
// and their bounds"): a trainer said so, and no trainer reads any more (one rank's done
// never cuts off a rank still reading); every trainer that came detached and none came
// back within the detach grace; or a rank had no trainer within the start grace. Only
// the trainer watcher uses it.
type lifetime struct {
	start      time.Time // the rings appeared
	idleSince  time.Time // every trainer gone since then (zero: one is attached, or none came yet)
	announced  bool      // the idle countdown was logged
	doneNoted  bool      // a done waiting for other trainers was logged
	startNoted bool      // ranks still without a trainer were logged
}

// announceAfter is how long every trainer must have been gone before serve says the job
// may be ending: at a normal end a rank's last trainer detaches some milliseconds
// before its loop finishes.
const announceAfter = time.Second

// startNote is when serve says which ranks have no trainer yet (at most half the grace).
const startNote = 30 * time.Second

// checkLifetime returns why the job is over now, or nil.
func (s *server) checkLifetime(lt *lifetime, now time.Time) *Ended {
	var never, said, on []int
	came, finished := false, 0
	for r, p := range s.prods {
		if p.Done() {
			said = append(said, r)
		}
		switch {
		case s.stats.rank(r).done.Load():
			finished++
			came = true
		case s.trainer[r].Load(): // not one that said done (watchTrainers)
			on = append(on, r)
		case s.attachedOnce(r):
			came = true
		default:
			never = append(never, r)
		}
	}
	if finished == len(s.prods) {
		return nil // the run is ending by itself
	}
	if len(said) > 0 {
		if len(on) == 0 {
			return &Ended{Kind: ring.StopDone, Reason: fmt.Sprintf("the job is done: %s's trainer said so", ranksText(said))}
		}
		if !lt.doneNoted {
			lt.doneNoted = true
			s.logf("%s's trainer says the job is done: it ends once %s's trainer detaches", ranksText(said), ranksText(on))
		}
	}
	idle := len(on) == 0 && came // every trainer that came has left
	if !idle {
		if lt.announced {
			s.logf("a trainer attached again: serving on")
		}
		lt.idleSince, lt.announced = time.Time{}, false
	}
	if g := s.cfg.StartGrace; len(never) > 0 && g > 0 {
		waited := now.Sub(lt.start)
		if waited >= g {
			return &Ended{Kind: ring.StopUnattached, Reason: fmt.Sprintf("%s never had a trainer within %v of the start (start_grace, --start-grace): "+
				"start one trainer per rank (ranks: %d), or serve as many ranks as there are trainers", ranksText(never), g, s.cfg.Ranks)}
		}
		if !lt.startNoted && waited >= min(startNote, g/2) {
			lt.startNoted = true
			s.logf("%s has no trainer yet; serve exits in %v unless one attaches (start_grace)", ranksText(never), (g - waited).Round(time.Second))
		}
	}
	if !idle {
		return nil
	}
	if lt.idleSince.IsZero() {
		lt.idleSince = now
	}
	g := s.cfg.DetachGrace
	if !lt.announced && g > announceAfter && now.Sub(lt.idleSince) >= announceAfter {
		lt.announced = true
		s.logf("every trainer has detached (%s); the job ends in %v unless one attaches (detach_grace)", s.positions(), g-announceAfter)
	}
	if g <= 0 || now.Sub(lt.idleSince) < g {
		return nil
	}
	if len(never) > 0 {
		return &Ended{Kind: ring.StopUnattached, Reason: fmt.Sprintf("%s never had a trainer, and every other trainer detached (%s) and none attached within %v (detach_grace): "+
			"start one trainer per rank (ranks: %d), or serve as many ranks as there are trainers", ranksText(never), s.positions(), g, s.cfg.Ranks)}
	}
	return &Ended{Kind: ring.StopIdle, Reason: fmt.Sprintf("the job is over: every trainer detached (%s) and none attached within %v (detach_grace)", s.positions(), g)}
}

// attachedOnce: a trainer has come to rank r since serve started. One counts even if it
// died before releasing a batch: it announced its pid in the ring header, which only a
// clean detach clears, and watchTrainers saw it if it lived 20 ms.
func (s *server) attachedOnce(r int) bool {
	p := s.prods[r]
	return s.hadTrainer[r].Load() || p.ConsumerPID() != 0 || p.Released() != 0
}

// positions says where each rank's trainers got to: "rank 0 at epoch 0 step 232 of 488".
func (s *server) positions() string {
	parts := make([]string, len(s.prods))
	for r, p := range s.prods {
		k := p.Counters()
		switch {
		case s.stats.rank(r).done.Load():
			parts[r] = fmt.Sprintf("rank %d read its whole stream", r)
			continue
		case !s.attachedOnce(r):
			parts[r] = fmt.Sprintf("rank %d never had one", r)
			continue
		}
		parts[r] = fmt.Sprintf("rank %d at epoch %d step %d of %d", r, k.ConsEpoch, k.ConsStep, s.plan.Steps(r))
	}
	return strings.Join(parts, ", ")
}

// ranksText names ranks: "rank 1", "ranks 1, 2 and 5".
func ranksText(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = fmt.Sprint(r)
	}
	return "ranks " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
