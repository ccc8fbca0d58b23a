package serve

import (
	"slices"
	"testing"
)

// Every row once per epoch across the ranks, apart from the dropped tail; the same
// number of batches on every rank; a different order each epoch.
func TestExactlyOnce(t *testing.T) {
	cfg := testConfig(t)
	out := serveAndRead(t, cfg, Options{}, nil)
	const rows, bs = 20000, 256
	p := testPlan(t, cfg)
	wantBatches := int(p.Steps(0))
	if p.DroppedRows() != int64(rows-wantBatches*2*bs) {
		t.Fatalf("plan reports %d rows dropped, its steps drop %d", p.DroppedRows(), rows-wantBatches*2*bs)
	}
	for epoch := range uint64(2) {
		seen := map[int64]int{}
		for r, s := range out {
			if len(s.ids[epoch]) != wantBatches*bs {
				t.Fatalf("rank %d epoch %d: %d rows, want %d", r, epoch, len(s.ids[epoch]), wantBatches*bs)
			}
			for _, id := range s.ids[epoch] {
				seen[id]++
			}
		}
		for id, n := range seen {
			if n != 1 || id < 0 || id >= rows {
				t.Fatalf("epoch %d: id %d seen %d times", epoch, id, n)
			}
		}
		if dropped := rows - len(seen); dropped != rows-wantBatches*2*bs {
			t.Fatalf("epoch %d: %d rows dropped, want %d", epoch, dropped, rows-wantBatches*2*bs)
		}
	}
	if slices.Equal(out[0].ids[0], out[0].ids[1]) {
		t.Fatal("epoch 1 has the order of epoch 0")
	}
}

// The streams are byte-identical across runs and worker counts; another seed changes them.
func TestDeterministic(t *testing.T) {
	base := testConfig(t)
	base.Workers = 1
	a := serveAndRead(t, base, Options{}, nil)
	many := testConfig(t)
	many.Workers = 4
	many.Prefetch = 3
	b := serveAndRead(t, many, Options{}, nil)
	again := testConfig(t)
	again.Workers = 1
	c := serveAndRead(t, again, Options{}, nil)
	for r := range a {
		if !slices.Equal(a[r].hashes, b[r].hashes) {
			t.Fatalf("rank %d: workers=1 and workers=4 streams differ", r)
		}
		if !slices.Equal(a[r].hashes, c[r].hashes) {
			t.Fatalf("rank %d: two runs differ", r)
		}
	}
	other := testConfig(t)
	other.Seed = 4
	d := serveAndRead(t, other, Options{}, nil)
	if slices.Equal(a[0].ids[0], d[0].ids[0]) {
		t.Fatal("seeds 3 and 4 gave the same order")
	}
}

// A consumer's seek, and a serve started at a position, give exactly the uninterrupted
// stream from there on.
func TestSeekAndStartMatchUninterrupted(t *testing.T) {
	full := serveAndRead(t, testConfig(t), Options{}, nil)
	perEpoch := len(full[0].ids[0]) / 256
	for _, at := range [][2]uint64{{0, 5}, {1, 0}, {1, uint64(perEpoch - 1)}} {
		skip := int(at[0])*perEpoch + int(at[1])
		got := serveAndRead(t, testConfig(t), Options{}, map[int][2]uint64{0: at, 1: at})
		for r := range got {
			if !slices.Equal(got[r].hashes, full[r].hashes[skip:]) {
				t.Fatalf("rank %d: after a seek to %v the stream differs from the uninterrupted one", r, at)
			}
		}
		started := serveAndRead(t, testConfig(t), Options{StartEpoch: at[0], StartStep: at[1]}, nil)
		for r := range started {
			if !slices.Equal(started[r].hashes, full[r].hashes[skip:]) {
				t.Fatalf("rank %d: a serve started at %v differs from the uninterrupted stream", r, at)
			}
		}
	}
	// A state saved at an epoch's end (step = the epoch's steps, as a trainer saves it
	// after its last batch) starts the next epoch, as the C library's shml_resume does.
	started := serveAndRead(t, testConfig(t), Options{StartEpoch: 0, StartStep: uint64(perEpoch)}, nil)
	for r := range started {
		if !slices.Equal(started[r].hashes, full[r].hashes[perEpoch:]) {
			t.Fatalf("rank %d: a serve started at the end of epoch 0 differs from epoch 1 of the uninterrupted stream", r)
		}
	}
}
