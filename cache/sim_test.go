package cache

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// letters makes a trace from a string: one key per letter.
func letters(s string) []Key {
	tr := make([]Key, len(s))
	for i, r := range s {
		tr[i] = key(int(r))
	}
	return tr
}

func unitSize(Key) int64 { return 1 }

func TestSimulateHandMadeTraces(t *testing.T) {
	for _, tc := range []struct {
		trace         string
		capacity      int64
		belady, lru   int64 // hits
		beladyRefused int64
	}{
		// Cyclic access one larger than the cache: LRU never hits; the optimum keeps two
		// entries for good and bypasses the third.
		{"abcabcabc", 2, 4, 0, 3},
		{"abcdabcdabcd", 3, 6, 0, 3},
		// Fits: every re-use hits under any policy.
		{"abab", 2, 2, 2, 0},
		// Evict the one needed furthest away: at the second c, a (needed at 7) rather
		// than b (needed at 3); LRU does the same here.
		{"abcbcbcaaa", 2, 6, 6, 0},
		// LRU admits c by dropping a, which is needed again; Belady bypasses c, never
		// needed again.
		{"abcbab", 2, 3, 2, 1},
		{"", 2, 0, 0, 0},
	} {
		tr := letters(tc.trace)
		b, l := Simulate(tr, unitSize, tc.capacity, "belady"), Simulate(tr, unitSize, tc.capacity, "lru")
		if b.Hits != tc.belady || l.Hits != tc.lru || b.Refused != tc.beladyRefused {
			t.Errorf("%q cap %d: belady %+v, lru %+v; want hits %d and %d", tc.trace, tc.capacity, b, l, tc.belady, tc.lru)
		}
		if opt := optimum(tr, tc.capacity); b.Hits != int64(opt) {
			t.Errorf("%q: belady %d hits, optimum %d", tc.trace, b.Hits, opt)
		}
	}
	sizes := map[Key]int64{key('a'): 6, key('b'): 5, key('c'): 4}
	// capacity 10: a+c fit together, b fits with c; a needed soonest each time.
	tr := letters("acbacbaca")
	b := Simulate(tr, func(k Key) int64 { return sizes[k] }, 10, "belady")
	if b.Hits != 5 {
		t.Errorf("sized trace: belady %+v, want 5 hits", b)
	}
}

// optimum is the most hits any policy (with bypass) gets on tr with unit sizes: a search
// over every choice of what to keep, memoized on (position, resident set).
func optimum(tr []Key, capacity int64) int {
	ids := map[Key]int{}
	for _, k := range tr {
		if _, ok := ids[k]; !ok {
			ids[k] = len(ids)
		}
	}
	memo := map[[2]uint64]int{}
	var best func(i int, set uint64) int
	best = func(i int, set uint64) int {
		if i == len(tr) {
			return 0
		}
		mk := [2]uint64{uint64(i), set}
		if v, ok := memo[mk]; ok {
			return v
		}
		bit := uint64(1) << ids[tr[i]]
		var v int
		switch {
		case set&bit != 0:
			v = 1 + best(i+1, set)
		default:
			v = best(i+1, set) // bypass
			if int64(popcount(set)) < capacity {
				v = max(v, best(i+1, set|bit))
			} else {
				for s := set; s != 0; s &= s - 1 {
					v = max(v, best(i+1, set&^(s&-s)|bit))
				}
			}
		}
		memo[mk] = v
		return v
	}
	return best(0, 0)
}

func popcount(x uint64) (n int) {
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// With unit sizes Belady (with bypass) is optimal: equal to the searched optimum, and so
// never below LRU.
func TestBeladyIsOptimalOnSmallRandomTraces(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 300 {
		tr := make([]Key, 6+rng.IntN(10))
		nk := 2 + rng.IntN(5)
		for i := range tr {
			tr[i] = key(rng.IntN(nk))
		}
		capacity := int64(1 + rng.IntN(3))
		b, l := Simulate(tr, unitSize, capacity, "belady"), Simulate(tr, unitSize, capacity, "lru")
		if opt := optimum(tr, capacity); b.Hits != int64(opt) || b.Hits < l.Hits {
			t.Fatalf("trace %d (%d keys, cap %d): belady %d, lru %d, optimum %d", n, nk, capacity, b.Hits, l.Hits, opt)
		}
	}
}

func TestBeladyBeatsLRUOnRandomTraces(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var bSum, lSum int64
	for n := range 100 {
		nk := 20 + rng.IntN(50)
		tr := make([]Key, 2000)
		for i := range tr {
			tr[i] = key(min(rng.IntN(nk), rng.IntN(nk)))
		}
		capacity := int64(5 + rng.IntN(nk))
		b, l := Simulate(tr, unitSize, capacity, "belady"), Simulate(tr, unitSize, capacity, "lru")
		if b.Hits < l.Hits {
			t.Fatalf("trace %d: belady %d < lru %d hits", n, b.Hits, l.Hits)
		}
		sized := func(k Key) int64 { return int64(k[0]%8) + 1 }
		bs, ls := Simulate(tr, sized, 4*capacity, "belady"), Simulate(tr, sized, 4*capacity, "lru")
		bSum, lSum = bSum+bs.Hits, lSum+ls.Hits
	}
	// Belady with sizes is a heuristic, not an optimum: compared in aggregate.
	if bSum < lSum {
		t.Fatalf("sized traces: belady %d hits in all, lru %d", bSum, lSum)
	}
}

// The hit-rate table (go test -run Table -v): row groups read once per epoch in a
// shuffled order, the shape of a training job, against cache sizes as a share of the
// dataset. LRU keeps what was read last, which the next epoch reads last.
func TestEpochHitRateTable(t *testing.T) {
	const groups, epochs = 500, 6
	rng := rand.New(rand.NewPCG(9, 10))
	var trace []Key
	for range epochs {
		for _, i := range rng.Perm(groups) {
			trace = append(trace, key(i))
		}
	}
	size := func(k Key) int64 { return 1<<20 + int64(k[0])<<10 } // 1–1.25 MiB
	var total int64
	for i := range groups {
		total += size(key(i))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d row groups × %d shuffled epochs\ncache/dataset  belady  lru\n", groups, epochs)
	for _, frac := range []float64{0.1, 0.25, 0.5, 0.75, 1} {
		capacity := int64(frac * float64(total))
		bl, lr := Simulate(trace, size, capacity, "belady"), Simulate(trace, size, capacity, "lru")
		fmt.Fprintf(&b, "%13.0f%%  %5.1f%%  %4.1f%%\n", 100*frac, 100*bl.HitRate(), 100*lr.HitRate())
		if bl.HitRate() < lr.HitRate() || (frac < 1 && bl.HitRate() < 0.9*frac*float64(epochs-1)/epochs) {
			t.Errorf("at %.0f%%: belady %.3f, lru %.3f", 100*frac, bl.HitRate(), lr.HitRate())
		}
	}
	t.Log(b.String())
}

func TestSimulateRejectsUnknownPolicy(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Simulate(nil, unitSize, 1, "fifo")
}
