package cache

import (
	"errors"
	"runtime/debug"
	"sync"
	"testing"
)

func TestKeyStringRoundTrips(t *testing.T) {
	k := key(7)
	got, err := ParseKey(k.String())
	if err != nil || got != k || len(k.String()) != 64 {
		t.Fatalf("ParseKey(%s) = %v, %v", k, got, err)
	}
	for _, bad := range []string{"", "xyz", k.String()[:63], "G" + k.String()[1:], "A" + k.String()[1:]} {
		if _, err := ParseKey(bad); !errors.Is(err, ErrBadKey) {
			t.Errorf("ParseKey(%q): %v, want ErrBadKey", bad, err)
		}
	}
}

func TestCommittedEntryIsServedWithItsBytes(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 64<<20, 4)
	k, sizes := key(1), []int64{1000, 0, 333, 4096}
	e := put(t, c, k, sizes...)
	if err := intact(k, e, sizes); err != nil {
		t.Fatalf("committed entry: %v", err)
	}
	if e.Rows() != 3 {
		t.Fatalf("Rows %d, want 3", e.Rows())
	}
	// header page, then 1000, 0, 333, 4096 bytes, each region starting 64-aligned
	if want := int64(4096 + 1024 + 0 + 384 + 4096); e.Size() != want {
		t.Fatalf("Size %d, want %d", e.Size(), want)
	}
	mustGet(t, c, k, sizes...)
	mustMiss(t, c, key(2))
	s := c.Stats()
	if s.Hits != 1 || s.Misses != 1 || s.HitBytes != e.Size() || s.Entries != 1 || s.ResidentBytes != e.Size() {
		t.Fatalf("stats %+v", s)
	}
	g, _ := c.Get(k)
	defer g.Close()
	g.WillNeed()
	g.Close()
	g.Close() // twice is harmless
	if g.Tensors() != nil {
		t.Fatal("views survive Close")
	}
}

func TestServedViewsAreReadOnly(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 64<<20, 1)
	k := key(1)
	put(t, c, k, 100)
	e, ok := c.Get(k)
	if !ok {
		t.Fatal("miss")
	}
	defer e.Close()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	faulted := func() (f bool) {
		defer func() { f = recover() != nil }()
		e.Tensors()[0][0] = 1
		return false
	}()
	if !faulted {
		t.Fatal("a store into a served view did not fault")
	}
}

func TestChecksumIsVerifiedOncePerProcess(t *testing.T) {
	dir := t.TempDir()
	a, _ := openCache(t, dir, 64<<20, 2)
	k := key(1)
	put(t, a, k, 5000)
	mustGet(t, a, k, 5000)
	if n := a.stats.checksums.Load(); n != 0 {
		t.Fatalf("the committing process checked its own entry %d times", n)
	}
	b, _ := openCache(t, dir, 64<<20, 2) // another process's view
	mustGet(t, b, k, 5000)
	mustGet(t, b, k, 5000)
	if n := b.stats.checksums.Load(); n != 1 {
		t.Fatalf("checksums computed %d, want 1 (first use only)", n)
	}
}

func TestCreateRejectsWhatCannotFit(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 4*64<<10, 4) // 64 KiB per shard
	if _, err := c.Create(key(1), Meta{}, []int64{64 << 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("entry over a shard's budget: %v, want ErrTooLarge", err)
	}
	if _, err := c.Create(key(1), Meta{}, []int64{-1}); err == nil {
		t.Fatal("negative size accepted")
	}
	if _, err := c.Create(key(1), Meta{}, make([]int64, maxTensors+1)); err == nil {
		t.Fatal("too many tensors accepted")
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 64<<20, 1)
	w, err := c.Create(key(1), Meta{}, []int64{10000})
	if err != nil {
		t.Fatal(err)
	}
	if len(temps(t, dir)) != 1 || pendingBytes(t, c, 0) == 0 {
		t.Fatal("an open writer has no temp file or no reservation")
	}
	w.Abort()
	w.Abort()
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	if n := len(temps(t, dir)); n != 0 || pendingBytes(t, c, 0) != 0 {
		t.Fatalf("after Abort: %d temp files, %d reserved bytes", n, pendingBytes(t, c, 0))
	}
	mustMiss(t, c, key(1))
	w, err = c.Create(key(1), Meta{}, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	fill(key(1), w.Tensors())
	e, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	w.Abort() // after Commit: nothing
	mustGet(t, c, key(1), 1)
}

func TestSameKeyCommittedTwiceKeepsOneFile(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 64<<20, 1)
	k := key(1)
	w1, err1 := c.Create(k, Meta{}, []int64{3000})
	w2, err2 := c.Create(k, Meta{}, []int64{3000})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	fill(k, w1.Tensors())
	fill(k, w2.Tensors())
	for _, w := range []*Writer{w1, w2} {
		e, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := intact(k, e, []int64{3000}); err != nil {
			t.Fatal(err)
		}
		e.Close()
	}
	if s := c.Stats(); s.Entries != 1 || len(temps(t, dir)) != 0 || pendingBytes(t, c, 0) != 0 {
		t.Fatalf("stats %+v, temps %v", s, temps(t, dir))
	}
	mustGet(t, c, k, 3000)
}

func TestConcurrentGoroutinesShareOneCache(t *testing.T) {
	c, _ := openCache(t, t.TempDir(), 2<<20, 4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 60 {
				k := key((g*7 + i) % 40)
				if e, ok := c.Get(k); ok {
					if err := intact(k, e, sizesOf(k)); err != nil {
						t.Error(err)
					}
					e.Close()
					continue
				}
				w, err := c.Create(k, Meta{}, sizesOf(k))
				if errors.Is(err, ErrNotAdmitted) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				fill(k, w.Tensors())
				if e, err := w.Commit(); err != nil {
					t.Error(err)
				} else {
					e.Close()
				}
			}
		})
	}
	wg.Wait()
	if s := c.Stats(); s.Hits == 0 || s.ResidentBytes > c.Budget() {
		t.Fatalf("stats %+v, budget %d", s, c.Budget())
	}
}
