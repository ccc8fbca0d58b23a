package serve

import (
	"testing"
	"unsafe"

	"github.com/shmloader/shmloader/cache"
)

// keepFixture commits one entry per row group 0..n-1 (rows records of 8 bytes, each
// byte the row group's number) and returns the cache, the keys and the entries.
func keepFixture(t *testing.T, n int) (*cache.Cache, []cache.Key, []*cache.Entry) {
	t.Helper()
	c, err := cache.Open(cache.Options{Dir: t.TempDir(), Size: 64 << 20, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	keys := make([]cache.Key, n)
	entries := make([]*cache.Entry, n)
	for g := range n {
		keys[g][0] = byte(g + 1)
		w, err := c.Create(keys[g], cache.Meta{Config: "test", Label: "rg", Rows: 100}, []int64{800})
		if err != nil {
			t.Fatal(err)
		}
		for i := range w.Tensors()[0] {
			w.Tensors()[0][i] = byte(g)
		}
		if entries[g], err = w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	return c, keys, entries
}

func entryAsBlock(e *cache.Entry) block { return block{data: e.Tensors()[0], rows: e.Rows()} }

// TestKeptMappingsAreReusedThenDropped: a released entry stays mapped and serves the next
// use of its row group (the same pages, counted as a hit); idle entries beyond the limit
// go least recently used first; an entry the cache no longer lists is not reused.
func TestKeptMappingsAreReusedThenDropped(t *testing.T) {
	c, keys, entries := keepFixture(t, 3)
	size := entries[0].Size()
	m := &mappings{cache: c, limit: 2 * size, kept: map[int]*mapped{}}

	if _, ok := m.reuse(0, keys[0]); ok {
		t.Fatal("reuse of a row group never kept")
	}
	var first [3]unsafe.Pointer
	for g := range 3 {
		b := m.keep(g, entries[g], entryAsBlock(entries[g]))
		first[g] = unsafe.Pointer(&b.data[0])
		b.release()
	}
	// Three idle entries, room for two: row group 0, the least recently used, is gone.
	if _, ok := m.kept[0]; ok || len(m.kept) != 2 || m.idle != 2*size {
		t.Fatalf("after 3 releases with room for 2: kept %d, idle %d", len(m.kept), m.idle)
	}
	hits := c.Stats().Hits
	b, ok := m.reuse(2, keys[2])
	if !ok || unsafe.Pointer(&b.data[0]) != first[2] || b.data[0] != 2 || b.rows != 100 {
		t.Fatalf("reuse of row group 2: ok %v, same mapping %v", ok, ok && unsafe.Pointer(&b.data[0]) == first[2])
	}
	if c.Stats().Hits != hits+1 || m.idle != size {
		t.Fatalf("a reuse is a hit and takes the entry out of the idle bytes: hits %d -> %d, idle %d",
			hits, c.Stats().Hits, m.idle)
	}
	// A second user of the same row group shares the mapping; it stays until both release.
	b2, ok := m.reuse(2, keys[2])
	if !ok || &b2.data[0] != &b.data[0] {
		t.Fatal("second reuse does not share the mapping")
	}
	b.release()
	if m.kept[2].refs != 1 || m.idle != size {
		t.Fatalf("one user left: refs %d, idle %d", m.kept[2].refs, m.idle)
	}
	b2.release()

	// A cache that does not list the key (here: another dir) gets no reuse, and the idle
	// mapping is closed.
	other, err := cache.Open(cache.Options{Dir: t.TempDir(), Size: 64 << 20, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	m.cache = other
	if _, ok := m.reuse(1, keys[1]); ok || m.kept[1] != nil {
		t.Fatal("reused an entry the cache does not list")
	}
	m.close()
	if len(m.kept) != 0 || m.idle != 0 {
		t.Fatalf("after close: kept %d, idle %d", len(m.kept), m.idle)
	}
}
