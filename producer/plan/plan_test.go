package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The permutations are part of the on-disk contract (a resumed job must see the same
// order as the original): these values must never change.
func TestPermGolden(t *testing.T) {
	got := fmt.Sprint(Perm(10, 42), Perm(10, 43), seedOf(7, 1, 0))
	const want = "[8 3 6 5 4 0 9 2 1 7] [4 9 2 1 6 0 8 3 5 7] 3779471936397972403"
	if got != want {
		t.Fatalf("permutations changed:\n got %s\nwant %s", got, want)
	}
}

func TestPermIsPermutation(t *testing.T) {
	for n := range 200 {
		p := Perm(n, uint64(n)*31)
		seen := make([]bool, n)
		for _, v := range p {
			if v < 0 || int(v) >= n || seen[v] {
				t.Fatalf("Perm(%d): %v is not a permutation", n, p)
			}
			seen[v] = true
		}
	}
}

func rowsOf(n int, each int64) []int64 {
	r := make([]int64, n)
	for i := range r {
		r[i] = each + int64(i%3) // uneven row groups
	}
	return r
}

func mustNew(t *testing.T, in Input) *Plan {
	t.Helper()
	p, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAutoPartitions(t *testing.T) {
	for groups, want := range map[int]int{0: 1, 7: 1, 15: 1, 16: 2, 31: 2, 32: 4, 64: 8, 1000: 8} {
		if got := AutoPartitions(groups); got != want {
			t.Errorf("AutoPartitions(%d) = %d, want %d", groups, got, want)
		}
	}
}

// The partitions hold every kept row group once, balance by kept rows to within the
// largest row group, and depend on the seed but not on the layout.
func TestSplitBalanced(t *testing.T) {
	rows := make([]int64, 100)
	for i := range rows {
		rows[i] = 1000 + int64(i*37%500)
	}
	rows[5] = 0
	deal := func(seed uint64, nodes int) [][]int {
		p := mustNew(t, Input{Rows: rows, BatchSize: 10, Seed: seed, Partitions: 8, Ranks: 1, Nodes: nodes, DropLast: true})
		var out [][]int
		for i := range p.Partitions() {
			out = append(out, p.PartitionRowGroups(i))
		}
		lo, hi := slices.Min(p.partRows), slices.Max(p.partRows)
		if hi-lo > slices.Max(rows) {
			t.Fatalf("partition rows %v: spread %d exceeds the largest row group", p.partRows, hi-lo)
		}
		return out
	}
	a := deal(1, 1)
	seen := map[int]bool{}
	for _, part := range a {
		if !slices.IsSorted(part) {
			t.Fatalf("partition %v not in file order", part)
		}
		for _, g := range part {
			if seen[g] || rows[g] == 0 {
				t.Fatalf("row group %d dealt twice or with no rows", g)
			}
			seen[g] = true
		}
	}
	if len(seen) != 99 {
		t.Fatalf("%d row groups dealt, want 99", len(seen))
	}
	if !slices.EqualFunc(a, deal(1, 4), slices.Equal) {
		t.Fatal("the deal changed with the node count")
	}
	// Equal row groups: which share a partition depends on the seed.
	same := make([]int64, 32)
	for i := range same {
		same[i] = 50
	}
	x := mustNew(t, Input{Rows: same, BatchSize: 10, Seed: 1, Partitions: 4, Ranks: 1, Nodes: 1, DropLast: true})
	y := mustNew(t, Input{Rows: same, BatchSize: 10, Seed: 2, Partitions: 4, Ranks: 1, Nodes: 1, DropLast: true})
	if slices.Equal(x.PartitionRowGroups(0), y.PartitionRowGroups(0)) {
		t.Fatal("the deal of equal row groups does not depend on the seed")
	}
}

func TestNodesMustDividePartitions(t *testing.T) {
	_, err := New(Input{Rows: rowsOf(48, 100), BatchSize: 10, Partitions: 12, Ranks: 1, Nodes: 5, DropLast: true})
	if err == nil || !strings.Contains(err.Error(), "1, 2, 3, 4, 6, 12") {
		t.Fatalf("want an error listing the node counts that work, got %v", err)
	}
	if _, err := New(Input{Rows: rowsOf(3, 100), BatchSize: 10, Partitions: 4, Ranks: 1, Nodes: 1}); err == nil {
		t.Fatal("want an error for more partitions than row groups")
	}
}

// rowID names a kept row: row group << 32 | index among the row group's kept rows.
type rowID int64

// batchRows lists global batch g's rows in batch order, as the producer reads them.
func batchRows(p *Plan, ep *Epoch, g uint64) []rowID {
	var out []rowID
	for _, sp := range p.Spans(ep, g) {
		w := ep.Parts[sp.Part][sp.Window]
		var ids []rowID
		for _, rg := range w.RowGroups {
			for i := range p.in.Rows[rg] {
				ids = append(ids, rowID(int64(rg)<<32|i))
			}
		}
		var perm []int32
		if w.Shuffled {
			perm = Perm(int(w.Rows), w.Seed)
		}
		for i := sp.From; i < sp.To; i++ {
			if perm != nil {
				out = append(out, ids[perm[i]])
			} else {
				out = append(out, ids[i])
			}
		}
	}
	return out
}

type layout struct{ nodes, ranks int }

var layouts = []layout{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}, {4, 1}, {4, 2}, {4, 3}}

// served runs one epoch of every node and rank of a layout and returns the rows of each
// global batch served, checking equal step counts (drop_last) and that each rank's steps
// map to distinct global batches.
func served(t *testing.T, in Input, l layout, epoch uint64, base uint64, from func(node int) uint64) map[uint64][]rowID {
	t.Helper()
	out := map[uint64][]rowID{}
	var steps []uint64
	for node := range l.nodes {
		in := in
		in.Node, in.Nodes, in.Ranks = node, l.nodes, l.ranks
		p := mustNew(t, in)
		ep := p.Epoch(epoch)
		for r := range l.ranks {
			n := p.StepsFrom(r, base)
			steps = append(steps, n)
			start := uint64(0)
			if from != nil {
				start = from(node)
			}
			for s := start; s < n; s++ {
				g := p.GlobalFrom(r, base, s)
				if p.Partition(g)%l.nodes != node {
					t.Fatalf("%+v: node %d serves batch %d of partition %d", l, node, g, p.Partition(g))
				}
				if _, dup := out[g]; dup {
					t.Fatalf("%+v: global batch %d served twice", l, g)
				}
				rows := batchRows(p, ep, g)
				if len(rows) != p.BatchRows(g) {
					t.Fatalf("batch %d: %d rows, want %d", g, len(rows), p.BatchRows(g))
				}
				out[g] = rows
			}
		}
	}
	if in.DropLast && slices.Min(steps) != slices.Max(steps) {
		t.Fatalf("%+v: ranks got unequal step counts %v", l, steps)
	}
	return out
}

// Exactly once, equal counts, and the same global batches byte for byte under every
// layout of 1, 2 and 4 nodes × 1, 2 and 3 ranks.
func TestElasticDeterminism(t *testing.T) {
	rows := rowsOf(37, 45)
	rows[2] = 0 // a filtered-out row group
	for _, drop := range []bool{true, false} {
		for _, window := range []int{0, 1, 3} {
			in := Input{Rows: rows, BatchSize: 8, Seed: 5, ShuffleRowGroups: true, Window: window, DropLast: drop, Partitions: 4}
			var ref map[uint64][]rowID
			for _, l := range layouts {
				got := served(t, in, l, 3, 0, nil)
				seen := map[rowID]bool{}
				var n int64
				for _, rs := range got {
					for _, id := range rs {
						if seen[id] {
							t.Fatalf("drop=%v window=%d %+v: row %#x served twice", drop, window, l, id)
						}
						seen[id] = true
						n++
					}
				}
				p := mustNew(t, Input{Rows: rows, BatchSize: 8, Seed: 5, ShuffleRowGroups: true, Window: window, DropLast: drop,
					Partitions: 4, Ranks: l.ranks, Nodes: l.nodes})
				if uint64(len(got)) != p.GlobalBatches() || n+p.DroppedRows() != p.Rows() {
					t.Fatalf("%+v: %d batches, %d rows + %d dropped; want %d batches, %d rows", l, len(got), n, p.DroppedRows(), p.GlobalBatches(), p.Rows())
				}
				if !drop && n != p.Rows() {
					t.Fatalf("%+v: drop_last false served %d of %d rows", l, n, p.Rows())
				}
				for g := range p.GlobalBatches() {
					if _, ok := got[g]; !ok {
						t.Fatalf("%+v: global batch %d not served (batches are not a prefix)", l, g)
					}
				}
				if ref == nil {
					ref = got
					continue
				}
				for g, rs := range got {
					if want, ok := ref[g]; ok && !slices.Equal(rs, want) {
						t.Fatalf("drop=%v window=%d %+v: global batch %d differs from the single-trainer run", drop, window, l, g)
					}
				}
			}
		}
	}
}

// A node reads the same row groups in every epoch: its partitions'.
func TestNodeKeepsItsRowGroups(t *testing.T) {
	for _, nodes := range []int{1, 2, 4} {
		for node := range nodes {
			p := mustNew(t, Input{Rows: rowsOf(40, 64), BatchSize: 16, Seed: 9, ShuffleRowGroups: true, Window: 2,
				Partitions: 4, DropLast: false, Ranks: 2, Node: node, Nodes: nodes})
			var first []int
			for e := range uint64(4) {
				var read []int
				ep := p.Epoch(e)
				for _, wr := range p.NodeOrder(ep, 0) {
					read = append(read, ep.Parts[wr.Part][wr.Index].RowGroups...)
				}
				slices.Sort(read)
				if e == 0 {
					first = read
					var want []int
					for _, i := range p.NodePartitions() {
						want = append(want, p.PartitionRowGroups(i)...)
					}
					slices.Sort(want)
					if !slices.Equal(read, want) {
						t.Fatalf("node %d/%d reads %v, its partitions hold %v", node, nodes, read, want)
					}
				} else if !slices.Equal(read, first) {
					t.Fatalf("node %d/%d reads %v in epoch %d, %v in epoch 0", node, nodes, read, e, first)
				}
			}
		}
	}
}

// Windows in NodeOrder cover every span of every batch the node serves, and come in the
// order of first use.
func TestNodeOrder(t *testing.T) {
	in := Input{Rows: rowsOf(30, 50), BatchSize: 16, Seed: 2, ShuffleRowGroups: true, Window: 3, Partitions: 6,
		DropLast: true, Ranks: 2, Node: 1, Nodes: 3}
	p := mustNew(t, in)
	ep := p.Epoch(1)
	order := p.NodeOrder(ep, 0)
	pos := map[[2]int]int{}
	for i, wr := range order {
		pos[[2]int{wr.Part, wr.Index}] = i
	}
	last := -1
	reads := make([]int, len(order))
	for s := range p.Steps(0) {
		for r := range 2 {
			for _, sp := range p.Spans(ep, p.Global(r, s)) {
				i, ok := pos[[2]int{sp.Part, sp.Window}]
				if !ok {
					t.Fatalf("window %d/%d used but not in NodeOrder", sp.Part, sp.Window)
				}
				reads[i]++
				if i > last+1 {
					t.Fatalf("window %d of NodeOrder used before window %d", i, last+1)
				}
				last = max(last, i)
			}
		}
	}
	if last != len(order)-1 {
		t.Fatalf("NodeOrder has %d windows, %d used", len(order), last+1)
	}
	for i, wr := range order {
		if wr.Last < wr.First || wr.Batches != reads[i] {
			t.Fatalf("window %d/%d: NodeOrder says %d batches read it, %d do", wr.Part, wr.Index, wr.Batches, reads[i])
		}
	}
	// Staggered first windows: partition i starts with i mod W row groups.
	for _, i := range p.NodePartitions() {
		want := i % 3
		if want == 0 {
			want = 3
		}
		if got := len(ep.Parts[i][0].RowGroups); got != want {
			t.Fatalf("partition %d's first window has %d row groups, want %d", i, got, want)
		}
	}
}

// A state saved at any step under one layout resumes under every other: the batches
// consumed before plus those served after are every served batch once, and the rows
// match the uninterrupted run's.
func TestResumeUnderAnotherWorld(t *testing.T) {
	rows := rowsOf(24, 40)
	in := Input{Rows: rows, BatchSize: 4, Seed: 3, ShuffleRowGroups: true, Window: 2, Partitions: 4, DropLast: true}
	ref := served(t, in, layout{1, 1}, 0, 0, nil)
	for _, a := range layouts {
		pa := mustNew(t, Input{Rows: rows, BatchSize: 4, Seed: 3, ShuffleRowGroups: true, Window: 2, Partitions: 4,
			DropLast: true, Ranks: a.ranks, Nodes: a.nodes})
		for _, step := range []uint64{0, 1, 5, pa.Steps(0) - 1} {
			before := served(t, in, a, 0, 0, nil)
			consumed := map[uint64]bool{}
			for g := range before {
				if g < step*pa.World() {
					consumed[g] = true
				}
			}
			for _, b := range layouts {
				pb := mustNew(t, Input{Rows: rows, BatchSize: 4, Seed: 3, ShuffleRowGroups: true, Window: 2, Partitions: 4,
					DropLast: true, Ranks: b.ranks, Nodes: b.nodes})
				base, s, err := pb.Resume(pa.World(), 0, step)
				if err != nil {
					t.Fatal(err)
				}
				after := served(t, in, b, 0, base, func(int) uint64 { return s })
				for g, rs := range after {
					if consumed[g] {
						t.Fatalf("%+v step %d -> %+v: batch %d served again", a, step, b, g)
					}
					if !slices.Equal(rs, ref[g]) {
						t.Fatalf("%+v -> %+v: batch %d differs", a, b, g)
					}
				}
				// Nothing between the resume point and the end of what b serves is skipped.
				at := step * pa.World()
				for g := at; g < at+uint64(len(after)); g++ {
					if _, ok := after[g]; !ok {
						t.Fatalf("%+v step %d -> %+v (base %d step %d): batch %d skipped", a, step, b, base, s, g)
					}
				}
			}
		}
	}
}

func TestEpochsAndSeedsDiffer(t *testing.T) {
	order := func(seed, epoch uint64) []int {
		p := mustNew(t, Input{Rows: rowsOf(20, 10), BatchSize: 4, Seed: seed, ShuffleRowGroups: true, Window: 2,
			DropLast: true, Ranks: 1, Nodes: 1, Partitions: 2})
		var o []int
		for _, ws := range p.Epoch(epoch).Parts {
			for _, w := range ws {
				o = append(o, w.RowGroups...)
				o = append(o, int(w.Seed%1000))
			}
		}
		return o
	}
	if !slices.Equal(order(1, 0), order(1, 0)) {
		t.Fatal("same seed and epoch gave different plans")
	}
	if slices.Equal(order(1, 0), order(1, 1)) || slices.Equal(order(1, 0), order(2, 0)) {
		t.Fatal("another epoch or seed gave the same plan")
	}
}

func TestNoShuffleKeepsFileOrder(t *testing.T) {
	p := mustNew(t, Input{Rows: rowsOf(6, 5), BatchSize: 5, Ranks: 1, Nodes: 1, DropLast: true})
	for i, w := range p.Epoch(9).Parts[0] {
		if w.Shuffled || len(w.RowGroups) != 1 || w.RowGroups[0] != i {
			t.Fatalf("window %d: %+v, want row group %d unshuffled", i, w, i)
		}
	}
}

func TestTooLargeBatch(t *testing.T) {
	_, err := New(Input{Rows: []int64{10, 10}, BatchSize: 8, Ranks: 2, Nodes: 2, DropLast: true})
	if err == nil || err.Error() == "" {
		t.Fatal("want an error for 20 rows and 4 ranks of 8")
	}
	if _, err := New(Input{Rows: []int64{0, 0}, BatchSize: 1, Ranks: 1, Nodes: 1}); err == nil {
		t.Fatal("want an error when no rows are left")
	}
	p, err := New(Input{Rows: []int64{10, 10}, BatchSize: 8, Ranks: 2, Nodes: 1, DropLast: false})
	if err != nil || p.GlobalBatches() != 3 || p.BatchRows(2) != 4 {
		t.Fatalf("drop_last false: %v, %d batches", err, p.GlobalBatches())
	}
}

// TestMaxBatchRows: in small random plans (batch sizes from 1 to beyond the dataset, with
// and without drop_last, 1 to 4 nodes), MaxBatchRows is the most rows of any batch a node
// serves, counted from the spans of every step of every rank in every epoch, from base 0
// and from a resumed base.
func TestMaxBatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	plans, short := 0, 0
	for range 400 {
		rows := make([]int64, 1+rng.IntN(12))
		var total int64
		for i := range rows {
			if rng.IntN(5) > 0 {
				rows[i] = int64(1 + rng.IntN(40))
				total += rows[i]
			}
		}
		if total == 0 {
			continue
		}
		in := Input{Rows: rows, BatchSize: 1 + rng.IntN(int(total)+20), Seed: rng.Uint64(), ShuffleRowGroups: rng.IntN(2) == 0,
			Window: rng.IntN(4), DropLast: rng.IntN(3) == 0, Partitions: rng.IntN(5), Ranks: 1 + rng.IntN(3),
			Nodes: []int{1, 2, 4}[rng.IntN(3)]}
		for node := range in.Nodes {
			in.Node = node
			p, err := New(in)
			if err != nil {
				continue // too few rows or row groups for this layout
			}
			plans++
			most := 0
			for epoch := range uint64(3) {
				ep := p.Epoch(epoch)
				for _, base := range []uint64{0, uint64(rng.IntN(int(p.ElasticLimit()) + 1))} {
					for r := range in.Ranks {
						for s := range p.StepsFrom(r, base) {
							most = max(most, len(batchRows(p, ep, p.GlobalFrom(r, base, s))))
						}
					}
				}
			}
			if most < in.BatchSize {
				short++
			}
			if got := p.MaxBatchRows(); got != most {
				t.Fatalf("%+v: MaxBatchRows %d, the largest batch served has %d rows", in, got, most)
			}
			if most > in.BatchSize || in.DropLast && most != in.BatchSize {
				t.Fatalf("%+v: largest batch %d rows", in, most)
			}
		}
	}
	t.Logf("%d plans, %d with batches shorter than batch_size", plans, short)
	if plans < 200 || short < 50 {
		t.Fatalf("only %d random plans were valid, %d with every batch shorter than batch_size", plans, short)
	}
}
