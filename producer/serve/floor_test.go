package serve

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shmloader/shmloader/producer/plan"
	"github.com/shmloader/shmloader/ring"
)

// A rank waiting for room behind a trainer's position must be woken when serve sees
// that trainer gone: nothing else may change while it waits (every window ready, no
// gather running), so without the wake it would wait for ever.
func TestTrainerLeavingWakesARankWaitingForRoom(t *testing.T) {
	g, err := ring.Spec{Job: "floor", Ranks: 1, SlotCount: 2, BatchCapacity: 1,
		Tensors: []ring.TensorSpec{{Name: "x", DType: ring.Int64}}}.Layout()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ring.NewProducer(make([]byte, g.TotalSize), g) // its ring header, in private memory
	if err != nil {
		t.Fatal(err)
	}
	s := &server{trainer: make([]atomic.Bool, 1), hadTrainer: make([]atomic.Bool, 1), prods: []*ring.Producer{p}}
	q := newQueue()
	defer q.stop()
	go func() { // a worker: every task is done at once
		for {
			tk, ok := q.pop()
			if !ok {
				return
			}
			tk.w.done(nil)
		}
	}()
	// Window i is read by batch position i alone; the one trainer the floor counts
	// reads batch 0 for as long as it is attached.
	place := func(k windowKey) (uint64, uint64) { return uint64(k.index), uint64(k.index) }
	floor := func() uint64 {
		if s.trainer[0].Load() {
			return 0
		}
		return done
	}
	s.windows = newWindows(q, newBlockSource(newRowLayout([]int{4}), []int64{1, 1}), 1, place, floor)
	defer s.windows.close()
	ep := &plan.Epoch{Parts: [][]plan.Window{{{Index: 0, RowGroups: []int{0}, Rows: 1}, {Index: 1, RowGroups: []int{1}, Rows: 1}}}}
	var on atomic.Bool
	on.Store(true)
	attached := []func() (bool, error){func() (bool, error) { return on.Load(), nil }}
	s.watchTrainers(attached)

	w0, err := s.windows.get(context.Background(), ep, 0, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.windows.unpin(w0)
	got := make(chan error, 1)
	go func() { // batch 1 needs window 1: no room while the trainer at batch 0 may read window 0
		w, err := s.windows.get(context.Background(), ep, 0, 1, 1, nil)
		if err == nil {
			s.windows.unpin(w)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("window 1 was served while the trainer at batch 0 still needs window 0 (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	on.Store(false) // the trainer exits without detaching
	s.watchTrainers(attached)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rank waiting for room was not woken when the trainer holding the floor left")
	}
}
