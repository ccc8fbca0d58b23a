package plan

import (
	"fmt"
	"slices"
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

// Every kept position of the epoch is served once, by exactly one (node, rank, step),
// the ranks get equal step counts with drop_last, and the nodes partition the batches of
// a single-node run.
func TestEveryRowOnce(t *testing.T) {
	for _, tc := range []struct {
		groups, bs, window, ranks, nodes int
		drop                             bool
	}{
		{10, 7, 3, 2, 1, true}, {10, 7, 3, 2, 1, false}, {13, 32, 4, 4, 2, true},
		{5, 3, 0, 3, 3, false}, {3, 1, 1, 1, 1, true}, {9, 50, 2, 2, 2, true},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			rows := rowsOf(tc.groups, 40)
			rows[2] = 0 // a filtered-out row group
			seen := map[[2]int64]int{}
			var total uint64
			for node := range tc.nodes {
				p, err := New(Input{Rows: rows, BatchSize: tc.bs, Seed: 5, ShuffleRowGroups: true, Window: tc.window,
					DropLast: tc.drop, Ranks: tc.ranks, Node: node, Nodes: tc.nodes})
				if err != nil {
					t.Fatal(err)
				}
				ep := p.Epoch(3)
				for r := range tc.ranks {
					if tc.drop && p.Steps(r) != p.Steps(0) {
						t.Fatalf("rank %d has %d steps, rank 0 %d", r, p.Steps(r), p.Steps(0))
					}
					for s := range p.Steps(r) {
						g := p.Global(r, s)
						total++
						n := 0
						for _, sp := range p.Spans(ep, g) {
							w := ep.Windows[sp.Window]
							for i := sp.From; i < sp.To; i++ {
								seen[[2]int64{int64(sp.Window), i}]++
								n++
							}
							if sp.From < 0 || sp.To > w.Rows {
								t.Fatalf("span %+v outside window of %d rows", sp, w.Rows)
							}
						}
						if n != p.BatchRows(g) {
							t.Fatalf("batch %d: spans give %d rows, want %d", g, n, p.BatchRows(g))
						}
					}
				}
				if total == 0 {
					t.Fatal("no batches")
				}
				if node == tc.nodes-1 {
					if total != p.GlobalBatches() {
						t.Fatalf("nodes served %d batches, want %d", total, p.GlobalBatches())
					}
					served := int64(len(seen))
					if served+p.DroppedRows() != p.Rows() {
						t.Fatalf("served %d + dropped %d != %d rows", served, p.DroppedRows(), p.Rows())
					}
				}
			}
			for k, c := range seen {
				if c != 1 {
					t.Fatalf("position %v served %d times", k, c)
				}
			}
		})
	}
}

func TestEpochsAndSeedsDiffer(t *testing.T) {
	order := func(seed, epoch uint64) []int {
		p, err := New(Input{Rows: rowsOf(20, 10), BatchSize: 4, Seed: seed, ShuffleRowGroups: true, Window: 2,
			DropLast: true, Ranks: 1, Nodes: 1})
		if err != nil {
			t.Fatal(err)
		}
		var o []int
		for _, w := range p.Epoch(epoch).Windows {
			o = append(o, w.RowGroups...)
			o = append(o, int(w.Seed%1000))
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
	p, err := New(Input{Rows: rowsOf(6, 5), BatchSize: 5, Ranks: 1, Nodes: 1, DropLast: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range p.Epoch(9).Windows {
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
	p, err := New(Input{Rows: []int64{10, 10}, BatchSize: 8, Ranks: 2, Nodes: 2, DropLast: false})
	if err != nil || p.GlobalBatches() != 3 || p.BatchRows(2) != 4 {
		t.Fatalf("drop_last false: %v, %d batches", err, p.GlobalBatches())
	}
}
