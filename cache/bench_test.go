package cache

import (
	"testing"
)

const benchEntry = 4 << 20 // a row group of 64K rows × 64 bytes

// BenchmarkCommit: Create, fill and Commit one entry (fallocate, mmap, CRC, rename,
// two manifest writes); the data bytes are the throughput.
func BenchmarkCommit(b *testing.B) {
	c, _ := openCache(b, b.TempDir(), 1<<40, 4)
	b.SetBytes(benchEntry)
	for i := 0; b.Loop(); i++ {
		w, err := c.Create(key(i), Meta{}, []int64{benchEntry})
		if err != nil {
			b.Fatal(err)
		}
		clear(w.Tensors()[0])
		e, err := w.Commit()
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkGetVerified: a hit on a file this process already checked: open, mmap, header.
func BenchmarkGetVerified(b *testing.B) {
	c, _ := openCache(b, b.TempDir(), 1<<30, 1)
	put(b, c, key(1), benchEntry)
	for b.Loop() {
		e, ok := c.Get(key(1))
		if !ok {
			b.Fatal("miss")
		}
		e.Close()
	}
}

// BenchmarkGetFirstUse: the first hit in a process, which reads every byte for the CRC.
func BenchmarkGetFirstUse(b *testing.B) {
	c, _ := openCache(b, b.TempDir(), 1<<30, 1)
	put(b, c, key(1), benchEntry)
	sh := c.shard(key(1))
	b.SetBytes(benchEntry)
	for b.Loop() {
		sh.mu.Lock()
		clear(sh.verified)
		sh.mu.Unlock()
		e, ok := c.Get(key(1))
		if !ok {
			b.Fatal("miss")
		}
		e.Close()
	}
}
