package ring

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/shmloader/shmloader/shm"
)

func testSpec(job string, depth, rows int) Spec {
	return Spec{Job: job, Rank: 0, Ranks: 1, SlotCount: depth, BatchCapacity: rows,
		Tensors: []TensorSpec{{Name: "x", DType: Float32, Shape: []int{3}}, {Name: "y", DType: Int64}}}
}

// newRing creates a ring in a private /dev/shm directory and returns its producer and a
// reader on a second, independent mapping of the same file.
func newRing(t testing.TB, s Spec) (*Producer, *Reader, []byte) {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "shmloader-ring-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	g, err := s.Layout()
	if err != nil {
		t.Fatal(err)
	}
	job, err := shm.CreateJob(dir, s.Job, []int64{int64(g.TotalSize)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Close() })
	p, err := NewProducer(job.Segments[0].Mem, g)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := shm.Open(job.Segments[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seg.Close() })
	vg, err := Validate(seg.Mem, s.Job, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(seg.Mem, vg, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return p, r, seg.Mem
}

func publish(t *testing.T, p *Producer, epoch, step uint64, rows int) {
	t.Helper()
	s, err := p.Acquire(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Tensor(1)[0] = byte(step)
	p.Publish(s, epoch, step, rows)
}

func marker(t *testing.T, p *Producer, flag uint32, epoch uint64) {
	t.Helper()
	s, err := p.Acquire(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.PublishMarker(s, flag, epoch)
}

func next(t *testing.T, r *Reader) View {
	t.Helper()
	v, _, err := r.Next(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSeekSkipsWhatWasPublishedBefore(t *testing.T) {
	p, r, _ := newRing(t, testSpec("seek", 8, 4))
	for step := range uint64(3) {
		publish(t, p, 0, step, 4)
	}
	first := next(t, r)
	r.Seek(5, 7)
	if e, s, ok := p.PollSeek(); !ok || e != 5 || s != 7 {
		t.Fatalf("producer saw seek (%d, %d, %v)", e, s, ok)
	}
	if _, _, ok := p.PollSeek(); ok {
		t.Fatal("a seek was applied twice")
	}
	publish(t, p, 5, 7, 4)
	v := next(t, r)
	if v.Epoch != 5 || v.Step != 7 {
		t.Fatalf("after seek got epoch %d step %d, want 5 7 (stale slots must be skipped)", v.Epoch, v.Step)
	}
	if first.Step != 0 || r.Held() != 1 {
		t.Fatalf("held %d after the seek, want only the new batch (seek releases what was held)", r.Held())
	}
}

// A consumer that holds the oldest slot of a full ring and seeks must still get its answer.
func TestSeekOnAFullRingWhileHolding(t *testing.T) {
	p, r, _ := newRing(t, testSpec("seekfull", 4, 1))
	for step := range uint64(4) {
		publish(t, p, 0, step, 1)
	}
	next(t, r) // holds the oldest slot; the ring is full
	r.Seek(3, 0)
	done := make(chan error, 1)
	go func() {
		s, err := p.Acquire(2 * time.Second)
		if err == nil {
			p.PollSeek()
			p.Publish(s, 3, 0, 1)
		}
		done <- err
	}()
	v := next(t, r)
	if err := <-done; err != nil || v.Epoch != 3 || v.Step != 0 {
		t.Fatalf("after seek on a full ring: producer %v, got epoch %d step %d", err, v.Epoch, v.Step)
	}
}

// A seek the producer never saw, because it had finished its stream, is an error, never
// an empty end of stream (a resume would otherwise silently lose the rest of the epoch).
func TestSeekAfterTheStreamEndedIsAnError(t *testing.T) {
	p, r, _ := newRing(t, testSpec("seekend", 8, 1))
	publish(t, p, 0, 0, 1)
	publish(t, p, 0, 1, 1)
	marker(t, p, FlagEndOfStream, 0)
	p.SetState(StateFinished)
	next(t, r)
	r.Seek(0, 0)
	for range 2 {
		if _, _, err := r.Next(time.Second); !errors.Is(err, ErrSeekUnanswered) {
			t.Fatalf("want ErrSeekUnanswered, got %v", err)
		}
	}
}

func TestMarkersEndEpochsAndStream(t *testing.T) {
	p, r, _ := newRing(t, testSpec("markers", 4, 2))
	publish(t, p, 0, 0, 2)
	marker(t, p, FlagEndOfEpoch, 0)
	v := next(t, r)
	r.Release(v.Seq)
	if _, e, err := r.Next(time.Second); !errors.Is(err, ErrEndOfEpoch) || e != 0 {
		t.Fatalf("want end of epoch 0, got %v (epoch %d)", err, e)
	}
	publish(t, p, 1, 0, 1)
	marker(t, p, FlagEndOfStream, 1)
	p.SetState(StateFinished)
	if v := next(t, r); v.Epoch != 1 || v.Rows != 1 {
		t.Fatalf("got epoch %d rows %d", v.Epoch, v.Rows)
	}
	for range 2 {
		if _, _, err := r.Next(time.Second); !errors.Is(err, ErrEndOfStream) {
			t.Fatalf("want end of stream, got %v", err)
		}
	}
}

func TestHoldingIsLimitedToDepthMinusOne(t *testing.T) {
	p, r, _ := newRing(t, testSpec("held", 4, 1))
	for step := range uint64(4) {
		publish(t, p, 0, step, 1)
	}
	var held []View
	for range 3 {
		held = append(held, next(t, r))
	}
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrHeld) {
		t.Fatalf("fourth hold: want ErrHeld, got %v", err)
	}
	if err := r.Release(held[2].Seq + 5); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("release of an unheld seq: %v", err)
	}
	// Releasing out of order frees nothing until the oldest goes back.
	r.Release(held[1].Seq)
	r.Release(held[2].Seq)
	if p.Occupancy() != 4 {
		t.Fatalf("occupancy %d after releasing newer slots, want 4", p.Occupancy())
	}
	r.Release(held[0].Seq)
	if p.Occupancy() != 1 {
		t.Fatalf("occupancy %d, want 1", p.Occupancy())
	}
}

// With every slot read and only the oldest held, nothing new can be published: Next says
// so at once instead of waiting out its timeout.
func TestHoldingTheOldestOfAFullRingIsHeld(t *testing.T) {
	p, r, _ := newRing(t, testSpec("oldest", 4, 1))
	for step := range uint64(4) {
		publish(t, p, 0, step, 1)
	}
	oldest := next(t, r)
	for range 3 {
		r.Release(next(t, r).Seq)
	}
	start := time.Now()
	if _, _, err := r.Next(5 * time.Second); !errors.Is(err, ErrHeld) || time.Since(start) > time.Second {
		t.Fatalf("want ErrHeld at once, got %v after %v", err, time.Since(start))
	}
	r.Release(oldest.Seq)
	publish(t, p, 0, 4, 1)
	if v := next(t, r); v.Step != 4 {
		t.Fatalf("after releasing the oldest got step %d, want 4", v.Step)
	}
}

func TestTimeoutAndStop(t *testing.T) {
	p, r, _ := newRing(t, testSpec("stop", 4, 1))
	start := time.Now()
	if _, _, err := r.Next(60 * time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	if d := time.Since(start); d < 60*time.Millisecond || d > time.Second {
		t.Fatalf("timeout took %v", d)
	}
	publish(t, p, 0, 0, 1)
	p.SetState(StateStopped)
	next(t, r) // published before the stop: still delivered
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrProducerGone) {
		t.Fatalf("after stop: want ErrProducerGone, got %v", err)
	}
}

func TestProducerWaitsForSpaceAndWakes(t *testing.T) {
	p, r, _ := newRing(t, testSpec("wake", 2, 1))
	publish(t, p, 0, 0, 1)
	publish(t, p, 0, 1, 1)
	if _, err := p.Acquire(20 * time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("full ring: want ErrTimeout, got %v", err)
	}
	done := make(chan error)
	go func() { _, err := p.Acquire(5 * time.Second); done <- err }()
	time.Sleep(100 * time.Millisecond) // let the producer go to sleep on the futex
	v := next(t, r)
	r.Release(v.Seq)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("producer not woken by a release")
	}
}

func TestCorruptCountersAndSlotsAreErrors(t *testing.T) {
	p, r, mem := newRing(t, testSpec("corrupt", 4, 2))
	publish(t, p, 0, 0, 2)
	sh := slotHeaderAt(mem, r.g.SlotOffset(0))
	sh.Rows = 3 // beyond capacity
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("rows beyond capacity: %v", err)
	}
	sh.Rows, sh.Seq = 2, 9 // wrong sequence
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong seq: %v", err)
	}
	sh.Seq, sh.Flags = 0, FlagEndOfEpoch|FlagEndOfStream
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("two marker bits: %v", err)
	}
	headerAt(mem).Head.Store(100) // a head far beyond the ring
	if _, _, err := r.Next(time.Second); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("impossible head: %v", err)
	}
	headerAt(mem).Tail.Store(200) // a consumer's impossible tail must not hurt the producer
	if _, err := p.Acquire(time.Second); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("impossible tail: %v", err)
	}
}

// wakeLatency runs trials of: one side goes to sleep, the other acts after 20 ms, and
// returns the median time from the action to the sleeper's return. A lost wake-up would
// leave the sleeper until its next 50 ms slice: about 25 ms on average.
func wakeLatency(t *testing.T, trials int, sleep func() error, act func()) time.Duration {
	t.Helper()
	lat := make([]time.Duration, 0, trials)
	for range trials {
		acted, done := make(chan time.Time, 1), make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(20 * time.Millisecond) // well past the spin: the sleeper is on the futex
			acted <- time.Now()
			act()
		}()
		if err := sleep(); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(<-acted))
		<-done
	}
	slices.Sort(lat)
	return lat[len(lat)/2]
}

func TestASleepingConsumerIsWokenByAPublish(t *testing.T) {
	p, r, _ := newRing(t, testSpec("wakec", 4, 1))
	step := uint64(0)
	med := wakeLatency(t, 9, func() error {
		v, _, err := r.Next(2 * time.Second)
		if err == nil {
			r.Release(v.Seq)
		}
		return err
	}, func() { publish(t, p, 0, step, 1); step++ })
	if med > 5*time.Millisecond {
		t.Fatalf("median wake-up %v after a publish: the producer's wake is lost", med)
	}
}

func TestASleepingProducerIsWokenByARelease(t *testing.T) {
	p, r, _ := newRing(t, testSpec("wakep", 2, 1))
	publish(t, p, 0, 0, 1)
	publish(t, p, 0, 1, 1)
	step := uint64(2)
	med := wakeLatency(t, 9, func() error {
		s, err := p.Acquire(2 * time.Second)
		if err == nil {
			p.Publish(s, 0, step, 1)
			step++
		}
		return err
	}, func() {
		v, _, err := r.Next(time.Second)
		if err != nil {
			panic(err)
		}
		r.Release(v.Seq)
	})
	if med > 5*time.Millisecond {
		t.Fatalf("median wake-up %v after a release: the consumer's wake is lost", med)
	}
}

func TestSpinFromEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": defaultSpin, "0": 0, "250": 250 * time.Microsecond, "1000000": time.Second,
		"-1": defaultSpin, "1000001": defaultSpin, "12x": defaultSpin, " 5": defaultSpin,
	} {
		if got := spinFromEnv(v); got != want {
			t.Errorf("SHMLOADER_SPIN_US=%q: spin %v, want %v", v, got, want)
		}
	}
}

// The observer counters count what each side did and how long it waited, and a header
// of protocol 3 carries the run (steps per epoch, epochs, global batches) to consumers.
func TestCountersAndRun(t *testing.T) {
	s := testSpec("counters", 2, 4)
	s.StepsPerEpoch, s.Epochs, s.GlobalBatches = 7, 3, 14
	p, r, _ := newRing(t, s)
	if g := r.Geometry(); g.StepsPerEpoch != 7 || g.Epochs != 3 || g.GlobalBatches != 14 {
		t.Fatalf("validated run: %d steps, %d epochs, %d global batches", g.StepsPerEpoch, g.Epochs, g.GlobalBatches)
	}
	publish(t, p, 1, 4, 3)
	publish(t, p, 1, 5, 2)
	start := time.Now()
	if _, err := p.Acquire(30 * time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("full ring: want ErrTimeout, got %v", err)
	}
	waited := time.Since(start)
	c := p.Counters()
	if c.RowsOut != 5 || c.PubEpoch != 1 || c.PubStep != 6 || c.Occupancy != 2 || c.RowsIn != 0 {
		t.Fatalf("after two publishes: %+v", c)
	}
	if c.ProducerWait < 25*time.Millisecond || c.ProducerWait > waited {
		t.Fatalf("producer wait %v, want about %v", c.ProducerWait, waited)
	}
	v := next(t, r)
	r.Release(v.Seq)
	v = next(t, r)
	r.Release(v.Seq)
	go func() {
		time.Sleep(30 * time.Millisecond)
		if s, err := p.Acquire(time.Second); err == nil {
			p.Publish(s, 1, 6, 1)
		}
	}()
	v = next(t, r)
	r.Release(v.Seq)
	c = p.Counters()
	if c.RowsIn != 6 || c.ConsEpoch != 1 || c.ConsStep != 7 || c.Occupancy != 0 {
		t.Fatalf("after three reads: %+v", c)
	}
	if c.ConsumerWait < 20*time.Millisecond || c.ConsumerWait > 5*time.Second {
		t.Fatalf("consumer wait %v, want about 30ms", c.ConsumerWait)
	}
}
