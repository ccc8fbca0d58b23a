package serve

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/dataset"
)

// TestSlotsHoldTheLargestBatch: without drop_last, a batch_size beyond what any batch can
// hold sizes every ring's slots for the largest batch there is (here the larger of the 2
// partitions' rows, each a batch of its own), not for batch_size or the dataset's rows;
// the start-up summary says so and gives the tensors that shape, and every row is still
// served once per epoch.
func TestSlotsHoldTheLargestBatch(t *testing.T) {
	const rows = 20000
	for _, bs := range []int{50000, 12000} {
		cfg := testConfig(t)
		cfg.DropLast, cfg.BatchSize = false, bs
		p := testPlan(t, cfg)
		ds, err := dataset.Open(cfg.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		var largest int64
		for _, i := range p.NodePartitions() {
			var n int64
			for _, g := range p.PartitionRowGroups(i) {
				n += ds.RowGroups[g].Rows
			}
			largest = max(largest, n)
		}
		want := int(min(int64(bs), largest))
		if want >= min(bs, rows) {
			t.Fatalf("batch_size %d: the largest partition has %d rows: the test needs a batch shorter than both", bs, largest)
		}

		var log lockedBuffer
		var mu sync.Mutex
		var capacity []uint32
		var slotBytes []uint64
		started := func(l *Live) {
			mu.Lock()
			defer mu.Unlock()
			for _, pr := range l.s.prods {
				g := pr.Geometry()
				capacity = append(capacity, g.BatchCapacity)
				for _, ts := range g.Tensors {
					if ts.NBytes != ts.RowBytes*uint64(want) {
						t.Errorf("batch_size %d: tensor %s takes %d bytes of a slot, want %d rows of %d", bs, ts.Name, ts.NBytes, want, ts.RowBytes)
					}
				}
				slotBytes = append(slotBytes, g.SlotSize)
			}
		}
		out := serveAndRead(t, cfg, Options{Log: &log, Started: started}, nil)
		mu.Lock()
		if len(capacity) != cfg.Ranks {
			t.Fatalf("batch_size %d: %d rings seen, want %d", bs, len(capacity), cfg.Ranks)
		}
		for r, c := range capacity {
			if int(c) != want {
				t.Errorf("batch_size %d: ring %d holds %d rows per slot, want %d (the largest batch)", bs, r, c, want)
			}
		}
		mu.Unlock()
		for _, line := range []string{
			fmt.Sprintf("batch_size %d: no batch of this node holds more than %d rows", bs, want),
			fmt.Sprintf("tensor id           int64    [%d]", want),
			fmt.Sprintf("%d rings × 4 slots × %s in", cfg.Ranks, units.Bytes(slotBytes[0])),
		} {
			if !strings.Contains(log.String(), line) {
				t.Errorf("batch_size %d: the summary lacks %q:\n%s", bs, line, log.String())
			}
		}
		for epoch := range uint64(cfg.Epochs) {
			seen := map[int64]int{}
			for _, s := range out {
				for _, id := range s.ids[epoch] {
					seen[id]++
				}
			}
			if len(seen) != rows {
				t.Fatalf("batch_size %d epoch %d: %d distinct rows served, want %d", bs, epoch, len(seen), rows)
			}
			for id, n := range seen {
				if n != 1 || id < 0 || id >= rows {
					t.Fatalf("batch_size %d epoch %d: id %d served %d times", bs, epoch, id, n)
				}
			}
		}
	}
}
