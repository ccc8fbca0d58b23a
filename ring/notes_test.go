package ring

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStopReasonReachesTheReaderAfterWhatWasPublished(t *testing.T) {
	p, r, mem := newRing(t, testSpec("why", 4, 1))
	publish(t, p, 0, 0, 1)
	why := "data/part-3.parquet: row group 5, column f017, page 2: snappy: corrupt input"
	p.Stop(StopError, why)
	next(t, r)
	_, _, err := r.Next(time.Second)
	if !errors.Is(err, ErrProducerGone) || !strings.HasSuffix(err.Error(), why) {
		t.Fatalf("want ErrProducerGone with the reason, got %v", err)
	}
	if n := ReadNotes(mem); n.StopKind != StopError || n.Stop != why {
		t.Fatalf("notes %+v", n)
	}
	p.Stop(StopSignal, "stopped by SIGTERM") // a stopped ring keeps its first reason
	if n := ReadNotes(mem); n.StopKind != StopError || n.Stop != why {
		t.Fatalf("a second stop rewrote the reason: %+v", n)
	}
}

func TestAFinishedRingKeepsItsEndOfStream(t *testing.T) {
	p, r, mem := newRing(t, testSpec("fin", 4, 1))
	marker(t, p, FlagEndOfStream, 0)
	p.SetState(StateFinished)
	p.Stop(StopSignal, "stopped by SIGTERM")
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrEndOfStream) {
		t.Fatalf("want the end of the stream, got %v", err)
	}
	if n := ReadNotes(mem); n.StopKind != StopNone || n.Stop != "" {
		t.Fatalf("a finished ring got a stop reason: %+v", n)
	}
}

func TestStallNotesAreCutAtACharacterAndCleared(t *testing.T) {
	p, _, mem := newRing(t, testSpec("stall", 4, 1))
	note := "rank 0 waits: rank 1 has had no trainer for 42 s (it holds 3 of the 4 decoded windows)"
	p.SetStall(note)
	if got := ReadNotes(mem).Stall; got != note {
		t.Fatalf("stall note %q", got)
	}
	long := strings.Repeat("é", StallTextSize) // 2 bytes each: the cut falls inside one
	p.SetStall(long)
	got := ReadNotes(mem).Stall
	if len(got) != StallTextSize-2 || !strings.HasPrefix(long, got) {
		t.Fatalf("long note: %d bytes, a prefix of whole characters: %v", len(got), strings.HasPrefix(long, got))
	}
	p.SetStall("")
	if got := ReadNotes(mem).Stall; got != "" {
		t.Fatalf("cleared note reads %q", got)
	}
	h := headerAt(mem)
	h.StallSeq.Add(1) // a writer that never finishes: no torn text, no note
	if got := ReadNotes(mem).Stall; got != "" {
		t.Fatalf("a note being rewritten reads %q", got)
	}
}

func TestDoneReachesTheProducer(t *testing.T) {
	p, r, _ := newRing(t, testSpec("done", 4, 1))
	if p.Done() {
		t.Fatal("done before anyone said it")
	}
	r.Done()
	if !p.Done() {
		t.Fatal("the reader's done did not reach the producer")
	}
}
