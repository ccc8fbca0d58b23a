package ring

import (
	"fmt"
	"unicode/utf8"
)

// The ring's words for people (PROTOCOL.md "Stop reasons and stall notes"): why the
// producer stopped, why a rank has no batch now, and a consumer's "the job is done".

// Stop records why the producer stops, then stores state stopped and wakes the consumer,
// which drains what was published and reports the producer gone with these words. A ring
// already finished or stopped keeps its state and reason.
func (p *Producer) Stop(kind uint32, reason string) {
	if p.h.State.Load() != StateRunning {
		return
	}
	putText(p.h.StopText[:], reason)
	p.h.StopKind.Store(kind)
	p.SetState(StateStopped) // [STATE] release: the reason above is complete
}

// SetStall publishes why this rank has no batch now ("" when it is not waiting). Only
// a change is written.
func (p *Producer) SetStall(note string) {
	if note == p.stall {
		return
	}
	p.stall = note
	p.h.StallSeq.Add(1) // [NOTE] odd: being rewritten
	putText(p.h.StallText[:], note)
	p.h.StallSeq.Add(1) // [NOTE] even (release): the text is complete
}

// Done reports whether a consumer has said the job is done (shml_done).
func (p *Producer) Done() bool { return p.h.ConsDone.Load() != 0 }

// Done tells the producer that the job is done (shml_done): it stops every ring once no
// consumer reads any more.
func (r *Reader) Done() {
	r.h.ConsDone.Store(1) // [DONE]
	r.h.TailBell.Add(1)   // the producer may sleep on a full ring
	futexWake(&r.h.TailBell)
}

// Notes reads the ring's words now.
func (r *Reader) Notes() Notes { return ReadNotes(r.mem) }

// goneErr is ErrProducerGone with the producer's stop reason, if it left one.
func (r *Reader) goneErr() error {
	if _, stop := readStop(r.h); stop != "" {
		return fmt.Errorf("%w: %s", ErrProducerGone, stop)
	}
	return ErrProducerGone
}

// readStop is the stop kind and reason of a stopped ring (none while it runs).
func readStop(h *Header) (uint32, string) {
	if h.State.Load() != StateStopped { // [STATE] acquire: the stop reason is complete
		return StopNone, ""
	}
	return h.StopKind.Load(), textOf(h.StopText[:])
}

// Notes are a segment's words, as an observer reads them.
type Notes struct {
	StopKind uint32
	Stop     string // why the producer stopped ("" while it runs)
	Stall    string // why the rank has no batch now ("" if it is not waiting)
	Done     bool   // a consumer said the job is done
}

// ReadNotes reads the notes of a segment that Validate accepted; mem may be mapped
// read-only. A stall note being rewritten is read again, a few times at most.
func ReadNotes(mem []byte) Notes {
	h := headerAt(mem)
	n := Notes{Done: h.ConsDone.Load() != 0}
	n.StopKind, n.Stop = readStop(h)
	for range 100 {
		s1 := h.StallSeq.Load() // [NOTE] acquire
		if s1%2 != 0 {
			continue
		}
		text := textOf(h.StallText[:])
		if h.StallSeq.Load() == s1 {
			n.Stall = text
			break
		}
	}
	return n
}

// putText writes s NUL-padded into dst, cut at a character boundary to leave a NUL.
func putText(dst []byte, s string) {
	if len(s) >= len(dst) {
		s = s[:len(dst)-1]
		for i := 0; i < utf8.UTFMax && len(s) > 0; i++ { // drop a rune the cut split
			if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
				break
			}
			s = s[:len(s)-1]
		}
	}
	n := copy(dst, s)
	clear(dst[n:])
}

// textOf is the NUL-terminated text in b, with invalid UTF-8 replaced: another process
// wrote it.
func textOf(b []byte) string {
	return string([]rune(cstring(b)))
}
