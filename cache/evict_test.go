package cache

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// futureOracle answers from a fixed table of next uses; absent keys have none.
type futureOracle map[Key]uint64

func (o futureOracle) NextUse(k Key) (uint64, bool) { p, ok := o[k]; return p, ok }

const unit = 8192 // an entry of one 4096-byte tensor: header page + data

func TestLRUEvictsTheLeastRecentlyUsed(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 3*unit, 1)
	a, b, cc, d := key(1), key(2), key(3), key(4)
	put(t, c, a, 4096)
	put(t, c, b, 4096)
	put(t, c, cc, 4096)
	mustGet(t, c, a, 4096) // b is now the oldest
	put(t, c, d, 4096)
	mustMiss(t, c, b)
	mustGet(t, c, a, 4096)
	mustGet(t, c, cc, 4096)
	mustGet(t, c, d, 4096)
	if s := c.Stats(); s.Evictions != 1 || s.ResidentBytes != 3*unit {
		t.Fatalf("stats %+v", s)
	}
}

func TestBeladyEvictsTheFurthestAndRefusesWhatIsNeededLast(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 3*unit, 1)
	a, b, cc, d, e, f, g := key(1), key(2), key(3), key(4), key(5), key(6), key(7)
	o := futureOracle{a: 10, b: 30, cc: 20, d: 15, e: 40, g: 5}
	c.SetOracle(o)
	put(t, c, a, 4096)
	put(t, c, b, 4096)
	put(t, c, cc, 4096)
	put(t, c, d, 4096) // needed at 15: b (30) is needed last and goes
	mustMiss(t, c, b)
	if _, err := c.Create(e, Meta{}, []int64{4096}); !errors.Is(err, ErrNotAdmitted) {
		t.Fatalf("entry needed after everything resident: %v, want ErrNotAdmitted", err)
	}
	if _, err := c.Create(f, Meta{}, []int64{4096}); !errors.Is(err, ErrNotAdmitted) {
		t.Fatalf("entry never needed again: %v, want ErrNotAdmitted", err)
	}
	if s := c.Stats(); s.Refused != 2 || s.Evictions != 1 || s.Entries != 3 {
		t.Fatalf("refusals evicted something: %+v", s)
	}
	delete(o, a) // a is not needed again: it goes first, before cc (20)
	put(t, c, g, 4096)
	mustMiss(t, c, a)
	for _, k := range []Key{cc, d, g} {
		mustGet(t, c, k, 4096)
	}
	c.SetOracle(nil) // back to LRU: of cc, d, g, cc was used first
	put(t, c, b, 4096)
	mustMiss(t, c, cc)
}

// An entry needing several evictions takes them in Belady order, and only if enough of
// the entries are needed later than it.
func TestBeladyEvictsSeveralOrNone(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 4*unit, 1)
	o := futureOracle{}
	c.SetOracle(o)
	for i := range 4 {
		o[key(i)] = uint64(10 * (i + 1)) // 10 20 30 40
		put(t, c, key(i), 4096)
	}
	big := key(9) // 3 units
	o[big] = 25
	if _, err := c.Create(big, Meta{}, []int64{3*unit - 4096}); !errors.Is(err, ErrNotAdmitted) {
		t.Fatalf("only two entries are needed after 25: %v, want ErrNotAdmitted", err)
	}
	o[big] = 15
	put(t, c, big, 3*unit-4096)
	mustGet(t, c, key(0), 4096)
	for i := 1; i < 4; i++ {
		mustMiss(t, c, key(i))
	}
}

func TestEvictedEntryStaysValidWhereMapped(t *testing.T) {
	dir := t.TempDir()
	a, _ := openCache(t, dir, 2*unit, 1)
	b, _ := openCache(t, dir, 2*unit, 1) // another process's view of the same dir
	put(t, a, key(1), 4096)
	held, ok := b.Get(key(1))
	if !ok {
		t.Fatal("miss")
	}
	defer held.Close()
	put(t, a, key(2), 4096)
	put(t, a, key(3), 4096) // evicts key 1
	mustMiss(t, b, key(1))
	if err := intact(key(1), held, []int64{4096}); err != nil {
		t.Fatalf("mapping of an evicted entry: %v", err)
	}
}

func TestBudgetHoldsPerShard(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 200_000, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		k := key(rng.IntN(100))
		if e, ok := c.Get(k); ok {
			e.Close()
			continue
		}
		w, err := c.Create(k, Meta{}, sizesOf(k))
		if errors.Is(err, ErrNotAdmitted) || errors.Is(err, ErrTooLarge) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fill(k, w.Tensors())
		e, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		if n := diskBytes(t, dir); n > c.Budget() {
			t.Fatalf("%d bytes on disk, budget %d", n, c.Budget())
		}
		for i, sh := range c.shards {
			if u := sh.m.used(); u > c.budget {
				t.Fatalf("shard %d uses %d, its budget is %d", i, u, c.budget)
			}
		}
	}
	if c.Stats().Evictions == 0 {
		t.Fatal("no evictions: the test does not exercise the budget")
	}
}

// traceOracle answers NextUse from a trace and the current position in it.
type traceOracle struct {
	trace []Key
	at    int
}

func (o *traceOracle) NextUse(k Key) (uint64, bool) {
	for j := o.at + 1; j < len(o.trace); j++ {
		if o.trace[j] == k {
			return uint64(j), true
		}
	}
	return 0, false
}

// The cache evicts exactly as the simulator says, for both policies: the simulator's
// table predicts the cache.
func TestCacheMatchesSimulator(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]Key, 25)
	dataSize := map[Key]int64{}
	for i := range keys {
		keys[i] = key(i)
		dataSize[keys[i]] = int64(rng.IntN(4)+1) * 4096
	}
	trace := make([]Key, 400)
	for i := range trace {
		trace[i] = keys[min(rng.IntN(len(keys)), rng.IntN(len(keys)))] // skewed
	}
	fileSize := func(k Key) int64 { return headerSize + dataSize[k] }
	const capacity = 12 * 4096
	for _, policy := range []string{"lru", "belady"} {
		t.Run(policy, func(t *testing.T) {
			c, _ := openCache(t, t.TempDir(), capacity, 1)
			o := &traceOracle{trace: trace}
			if policy == "belady" {
				c.SetOracle(o)
			}
			for i, k := range trace {
				o.at = i
				if e, ok := c.Get(k); ok {
					e.Close()
					continue
				}
				w, err := c.Create(k, Meta{}, []int64{dataSize[k]})
				if errors.Is(err, ErrNotAdmitted) || errors.Is(err, ErrTooLarge) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				e, err := w.Commit()
				if err != nil {
					t.Fatal(err)
				}
				e.Close()
			}
			sim := Simulate(trace, fileSize, capacity, policy)
			s := c.Stats()
			if s.Hits != sim.Hits || s.HitBytes != sim.HitBytes || s.Evictions != sim.Evictions || s.Refused != sim.Refused {
				t.Fatalf("cache %+v, simulator %+v", s, sim)
			}
			t.Logf("%s: %d hits of %d", policy, s.Hits, len(trace))
		})
	}
}
