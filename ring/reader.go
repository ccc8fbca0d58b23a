package ring

import (
	"fmt"
	"os"
	"time"
)

// Reader is the consuming end of one ring: PROTOCOL.md "Publishing and reading" from the
// consumer's side. One goroutine uses it at a time.
type Reader struct {
	mem    []byte
	h      *Header
	g      *Geometry
	cursor uint64  // next seq to read (private)
	tail   uint64  // private copy of h.Tail: the consumer is its only writer
	gen    uint64  // current seek generation
	state  []uint8 // per slot index: slotFree, slotHeld, slotReleased
	held   int
	eos    bool
	gone   bool // the producer was seen dead or stopped: final
	w      waiter
}

const (
	slotFree = iota
	slotHeld
	slotReleased
)

// View is a held slot.
type View struct {
	SlotHeader
	Mem []byte // the whole slot
}

// NewReader starts reading a validated ring at the oldest unreleased slot. alive reports
// nil while the producer lives; it is called between sleeps.
func NewReader(mem []byte, g *Geometry, alive func() error) (*Reader, error) {
	h := headerAt(mem)
	r := &Reader{mem: mem, h: h, g: g, state: make([]uint8, g.SlotCount)}
	r.tail = h.Tail.Load()
	if head := h.Head.Load(); r.tail > head || head-r.tail > uint64(g.SlotCount) {
		return nil, fmt.Errorf("%w: tail %d against head %d", ErrCorrupt, r.tail, head)
	}
	r.cursor = r.tail
	s := h.SeekSeq.Load()
	if s%2 != 0 { // a consumer died while writing a seek: undo it (PROTOCOL.md "Seek")
		s--
		h.SeekSeq.Store(s)
	}
	r.gen = s / 2
	h.ConsumerPID.Store(uint32(os.Getpid()))
	h.ConsDone.Store(0) // [DONE] a new consumer of the rank reads: its predecessor's done is not its
	r.w = waiter{bell: &h.HeadBell, waiting: &h.ConsWaiting, check: func() error {
		switch st := h.State.Load(); st { // [STATE] acquire
		case 0, StateRunning:
			return alive()
		case StateStopped:
			return ErrProducerGone
		case StateFinished:
			if h.Head.Load() <= r.cursor {
				return ErrEndOfStream
			}
			return nil
		default:
			return fmt.Errorf("%w: producer state %d", ErrCorrupt, st)
		}
	}, spin: SpinFor}
	return r, nil
}

// Geometry is the validated layout this reader trusts.
func (r *Reader) Geometry() *Geometry { return r.g }

// Held is the number of slots held.
func (r *Reader) Held() int { return r.held }

// Next returns the next batch slot, waiting up to timeout (< 0: forever). At an epoch's
// end it returns ErrEndOfEpoch once (with the epoch that ended), at the stream's end
// ErrEndOfStream, and ErrProducerGone when the producer died or stopped.
func (r *Reader) Next(timeout time.Duration) (View, uint64, error) {
	n := uint64(r.g.SlotCount)
	for {
		if r.held >= int(n)-1 {
			return View{}, 0, ErrHeld
		}
		if r.eos {
			return View{}, 0, r.endOfStream()
		}
		if r.gone {
			return View{}, 0, r.goneErr()
		}
		head := r.h.Head.Load() // [PUB] acquire: slots below head are complete
		if head < r.tail || head-r.tail > n {
			return View{}, 0, fmt.Errorf("%w: head %d against tail %d", ErrCorrupt, head, r.tail)
		}
		if r.cursor == head {
			if r.cursor-r.tail == n {
				return View{}, 0, ErrHeld // every slot is read and the oldest is held: nothing can come
			}
			start := time.Now()
			err := r.w.wait(func() bool { return r.h.Head.Load() > r.cursor }, timeout)
			r.h.ConsWaitNs.Add(uint64(time.Since(start)))
			r.eos = r.eos || err == ErrEndOfStream
			r.gone = r.gone || err == ErrProducerGone
			if r.eos {
				return View{}, 0, r.endOfStream()
			}
			if r.gone {
				return View{}, 0, r.goneErr()
			}
			if err != nil {
				return View{}, 0, err
			}
			continue
		}
		off := r.g.SlotOffset(r.cursor % n)
		sh := *slotHeaderAt(r.mem, off) // copy once: the producer cannot change what we checked
		if err := r.g.CheckSlot(&sh, r.cursor); err != nil {
			return View{}, 0, err
		}
		r.cursor++
		r.state[sh.Seq%n] = slotHeld
		r.held++
		switch {
		case sh.Gen != r.gen:
			r.release(sh.Seq) // answers an older seek: skip it unseen
		case sh.Flags&FlagEndOfEpoch != 0:
			r.release(sh.Seq)
			return View{}, sh.Epoch, ErrEndOfEpoch
		case sh.Flags&FlagEndOfStream != 0:
			r.release(sh.Seq)
			r.eos = true
			return View{}, sh.Epoch, r.endOfStream()
		default:
			r.h.ConsRows.Add(uint64(sh.Rows))
			r.h.ConsEpoch.Store(sh.Epoch)
			r.h.ConsStep.Store(sh.Step + 1)
			return View{SlotHeader: sh, Mem: r.mem[off : off+r.g.SlotSize : off+r.g.SlotSize]}, 0, nil
		}
	}
}

// endOfStream is ErrEndOfStream, or ErrSeekUnanswered if the stream ended before the
// producer applied our last seek: a resume must never look like an empty, finished epoch.
func (r *Reader) endOfStream() error {
	if r.h.SeekAck.Load() < r.gen {
		return ErrSeekUnanswered
	}
	return ErrEndOfStream
}

// Release hands the slot of seq back. Slots may be released in any order; the producer
// gets them back in order.
func (r *Reader) Release(seq uint64) error {
	if seq < r.tail || seq >= r.cursor || r.state[seq%uint64(r.g.SlotCount)] != slotHeld {
		return fmt.Errorf("%w (seq %d)", ErrNotHeld, seq)
	}
	r.release(seq)
	return nil
}

func (r *Reader) release(seq uint64) {
	n := uint64(r.g.SlotCount)
	r.state[seq%n] = slotReleased
	r.held--
	moved := false
	for r.tail < r.cursor && r.state[r.tail%n] == slotReleased {
		r.state[r.tail%n] = slotFree
		r.tail++
		moved = true
	}
	if moved {
		r.h.Tail.Store(r.tail) // [REL] release (seq-cst): we are done with slots below tail
		ring(&r.h.TailBell, &r.h.ProdWaiting)
	}
}

// ReleaseAll releases every held slot.
func (r *Reader) ReleaseAll() {
	n := uint64(r.g.SlotCount)
	for seq := r.tail; seq < r.cursor; seq++ {
		if r.state[seq%n] == slotHeld {
			r.release(seq)
		}
	}
}

// Seek asks the producer to continue this ring at (epoch, step). It releases every held
// slot first (a held slot would pin the tail and could starve the answer), and skips
// everything published before the producer saw the request.
func (r *Reader) Seek(epoch, step uint64) { r.SeekFrom(epoch, step, 0) }

// SeekFrom is Seek to step of an epoch started at global batch base (PROTOCOL.md, "Seek").
func (r *Reader) SeekFrom(epoch, step, base uint64) {
	r.ReleaseAll()
	s := r.h.SeekSeq.Load()
	r.h.SeekSeq.Store(s + 1) // [SEEK] odd: request being written
	r.h.SeekEpoch.Store(epoch)
	r.h.SeekStep.Store(step)
	r.h.SeekBase.Store(base)
	r.h.SeekSeq.Store(s + 2) // [SEEK] even: request complete
	r.gen = (s + 2) / 2
	r.eos = false
	r.h.TailBell.Add(1)
	futexWake(&r.h.TailBell)
}

// Close releases everything held and clears the consumer pid. The caller unmaps.
func (r *Reader) Close() {
	r.ReleaseAll()
	r.h.ConsumerPID.Store(0)
}
