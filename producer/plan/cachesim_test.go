package plan_test

import (
	"encoding/binary"
	"testing"

	"github.com/shmloader/shmloader/cache"
	"github.com/shmloader/shmloader/producer/plan"
)

// rowBytes is the width of a decoded row in these simulations; hit rates do not depend
// on it, since capacities are fractions of the node's bytes.
const rowBytes = 652

// groupKey packs a row group's global index into a cache key.
func groupKey(g int) cache.Key {
	var k cache.Key
	binary.LittleEndian.PutUint64(k[:8], uint64(g))
	return k
}

// nodeTrace is the row groups one node reads over epochs [0, epochs): each epoch's
// windows in the order of first use, each window's row groups in decode order.
func nodeTrace(p *plan.Plan, epochs int) []cache.Key {
	var tr []cache.Key
	for e := range uint64(epochs) {
		ep := p.Epoch(e)
		for _, w := range p.NodeOrder(ep, 0) {
			for _, g := range ep.Parts[w.Part][w.Index].RowGroups {
				tr = append(tr, groupKey(g))
			}
		}
	}
	return tr
}

// The plan knows every future read, so the cache evicts by Belady's rule. On the row
// groups one node reads over several shuffled epochs, that must never do worse than LRU
// (what a cache without the plan does), and must do strictly better when the cache
// holds a quarter or half of the node's data: each epoch reads every row group once in
// a new order, a loop longer than the cache, which is LRU's worst case.
func TestBeladyBeatsLRUOnPlanTrace(t *testing.T) {
	rows := make([]int64, 256)
	for i := range rows {
		rows[i] = 4000 + int64(i*7919%3001) // uneven kept rows
	}
	const epochs = 6
	for _, layout := range []struct{ node, nodes int }{{0, 1}, {1, 2}} {
		p, err := plan.New(plan.Input{Rows: rows, BatchSize: 512, Seed: 7, ShuffleRowGroups: true, Window: 4,
			DropLast: true, Partitions: 8, Ranks: 2, Node: layout.node, Nodes: layout.nodes})
		if err != nil {
			t.Fatal(err)
		}
		tr := nodeTrace(p, epochs)
		mine := map[cache.Key]bool{}
		for _, i := range p.NodePartitions() {
			for _, g := range p.PartitionRowGroups(i) {
				mine[groupKey(g)] = true
			}
		}
		distinct := map[cache.Key]bool{}
		for _, k := range tr {
			if !mine[k] {
				t.Fatalf("node %d of %d: the trace reads a row group of another node's partition", layout.node, layout.nodes)
			}
			distinct[k] = true
		}
		size := func(k cache.Key) int64 { return rows[binary.LittleEndian.Uint64(k[:8])] * rowBytes }
		total := p.NodeRows() * rowBytes
		// No policy beats the compulsory misses: the first read of each row group.
		ceiling := 1 - float64(len(distinct))/float64(len(tr))
		t.Logf("node %d of %d: %d row groups, %d reads over %d epochs, %d bytes; ceiling %.3f",
			layout.node, layout.nodes, len(distinct), len(tr), epochs, total, ceiling)
		t.Logf("| capacity | Belady | LRU |")
		for _, pct := range []int64{25, 50, 75} {
			capacity := total * pct / 100
			b := cache.Simulate(tr, size, capacity, "belady")
			l := cache.Simulate(tr, size, capacity, "lru")
			t.Logf("| %d %% | %.3f | %.3f |", pct, b.HitRate(), l.HitRate())
			switch {
			case b.Hits < l.Hits:
				t.Errorf("node %d of %d, %d %%: Belady %d hits < LRU %d", layout.node, layout.nodes, pct, b.Hits, l.Hits)
			case pct <= 50 && b.Hits == l.Hits:
				t.Errorf("node %d of %d, %d %%: Belady no better than LRU (%d hits)", layout.node, layout.nodes, pct, b.Hits)
			case b.HitRate() > ceiling:
				t.Errorf("node %d of %d, %d %%: Belady hit rate %.3f above the ceiling %.3f", layout.node, layout.nodes, pct, b.HitRate(), ceiling)
			}
		}
	}
}
