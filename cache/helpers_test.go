package cache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func key(i int) Key { return sha256.Sum256(fmt.Appendf(nil, "key-%d", i)) }

// keyInShard finds the i-th key (from start) that lands in shard s of n.
func keyInShard(s, n, start int) Key {
	for j := start; ; j++ {
		if k := key(j); k.shard(n) == s {
			return k
		}
	}
}

// pattern is what every test writes into tensor t of key k: readers can check it.
func pattern(k Key, t, j int) byte { return k[(j+t)%len(k)] ^ byte(j*7+t) }

func fill(k Key, ts [][]byte) {
	for t, b := range ts {
		for j := range b {
			b[j] = pattern(k, t, j)
		}
	}
}

// intact reports whether e holds key k's pattern in tensors of the given sizes.
func intact(k Key, e *Entry, sizes []int64) error {
	ts := e.Tensors()
	if len(ts) != len(sizes) {
		return fmt.Errorf("%d tensors, want %d", len(ts), len(sizes))
	}
	for t, b := range ts {
		if int64(len(b)) != sizes[t] {
			return fmt.Errorf("tensor %d of %d bytes, want %d", t, len(b), sizes[t])
		}
		for j := range b {
			if b[j] != pattern(k, t, j) {
				return fmt.Errorf("tensor %d byte %d: %#x, want %#x", t, j, b[j], pattern(k, t, j))
			}
		}
	}
	return nil
}

// put writes and commits key k; the returned entry is closed at the test's end.
func put(t testing.TB, c *Cache, k Key, sizes ...int64) *Entry {
	t.Helper()
	w, err := c.Create(k, Meta{Config: "cfg", Label: "label " + k.String()[:8], Rows: 3}, sizes)
	if err != nil {
		t.Fatal(err)
	}
	fill(k, w.Tensors())
	e, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// mustGet asserts a hit with k's pattern.
func mustGet(t testing.TB, c *Cache, k Key, sizes ...int64) {
	t.Helper()
	e, ok := c.Get(k)
	if !ok {
		t.Fatalf("Get %v: miss, want a hit", k)
	}
	defer e.Close()
	if err := intact(k, e, sizes); err != nil {
		t.Fatalf("Get %v: %v", k, err)
	}
}

func mustMiss(t testing.TB, c *Cache, k Key) {
	t.Helper()
	if e, ok := c.Get(k); ok {
		e.Close()
		t.Fatalf("Get %v: hit, want a miss", k)
	}
}

// temps lists the *.tmp files under dir's shards.
func temps(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "s*", "*"+tempSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// pendingBytes is the reservation total in shard i's manifest on disk.
func pendingBytes(t testing.TB, c *Cache, i int) (n int64) {
	t.Helper()
	m, _, err := c.shards[i].read()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.pending {
		n += p.size
	}
	return n
}

// entryFiles lists the committed entry files under dir's shards.
func entryFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "s*", "*"+entrySuffix))
	return m
}

// diskBytes sums the sizes of the entry files under dir.
func diskBytes(t testing.TB, dir string) (n int64) {
	for _, p := range entryFiles(t, dir) {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// patch overwrites bytes of a file in place.
func patch(t testing.TB, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
