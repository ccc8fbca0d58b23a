package cache

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// committed makes a dir holding keys 0..n-1 (written by a Cache that is then closed) and
// returns the path of key 0's entry file.
func committed(t *testing.T, n int, sizes ...int64) (dir, path string) {
	dir = t.TempDir()
	a, _ := openCache(t, dir, 64<<20, 2)
	for i := range n {
		put(t, a, key(i), sizes...)
	}
	a.Close()
	return dir, filepath.Join(dir, shardName(key(0).shard(2)), entryName(key(0)))
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	patch(t, path, off, []byte{b[off] ^ 0x40})
}

// Each kind of damage to an entry is found on first use, counted, removed, and the next
// Create rebuilds the entry; the undamaged entries are still served.
func TestCorruptEntryIsCountedDroppedAndRebuilt(t *testing.T) {
	sizes := []int64{5000, 300}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"data byte", func(t *testing.T, p string) { flip(t, p, headerSize+4000) }},
		{"second region", func(t *testing.T, p string) { flip(t, p, headerSize+5056+299) }},
		{"magic", func(t *testing.T, p string) { flip(t, p, offMagic+3) }},
		{"key", func(t *testing.T, p string) { flip(t, p, offKey+31) }},
		{"rows", func(t *testing.T, p string) { flip(t, p, offRows) }},
		{"file size", func(t *testing.T, p string) { flip(t, p, offFileSize+1) }},
		{"tensor count", func(t *testing.T, p string) { flip(t, p, offCount) }},
		{"region offset", func(t *testing.T, p string) { flip(t, p, offTable+16) }},
		{"region length", func(t *testing.T, p string) { flip(t, p, offTable+8) }},
		{"crc field", func(t *testing.T, p string) { flip(t, p, offCRC) }},
		{"label", func(t *testing.T, p string) { flip(t, p, offStrings+3) }},
		{"reserved header byte", func(t *testing.T, p string) { flip(t, p, 2000) }},
		{"truncated", func(t *testing.T, p string) { os.Truncate(p, headerSize+100) }},
		{"truncated header", func(t *testing.T, p string) { os.Truncate(p, 100) }},
		{"emptied", func(t *testing.T, p string) { os.Truncate(p, 0) }},
		{"extended", func(t *testing.T, p string) { os.Truncate(p, headerSize+8192) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := committed(t, 3, sizes...)
			tc.damage(t, path)
			c, _ := openCache(t, dir, 64<<20, 2)
			mustMiss(t, c, key(0))
			if s := c.Stats(); s.Corrupt != 1 {
				t.Fatalf("Corrupt = %d, want 1", s.Corrupt)
			}
			if _, err := os.Stat(path); err == nil {
				t.Fatal("corrupt entry left in place")
			}
			mustMiss(t, c, key(0)) // still a miss, counted once
			if s := c.Stats(); s.Corrupt != 1 || s.Entries != 2 {
				t.Fatalf("stats %+v", s)
			}
			put(t, c, key(0), sizes...)
			mustGet(t, c, key(0), sizes...)
			mustGet(t, c, key(1), sizes...)
			mustGet(t, c, key(2), sizes...)
		})
	}
}

func TestCorruptManifestIsCountedAndRebuiltFromEntries(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"body byte", func(t *testing.T, p string) { flip(t, p, manifestHdr+5) }},
		{"generation", func(t *testing.T, p string) { flip(t, p, offGen) }},
		{"length", func(t *testing.T, p string) { flip(t, p, offMLen) }},
		{"magic", func(t *testing.T, p string) { flip(t, p, 0) }},
		{"truncated", func(t *testing.T, p string) { os.Truncate(p, 40) }},
		{"garbage", func(t *testing.T, p string) { os.WriteFile(p, []byte("\xdd\xff\xff\xff\xffnot a manifest"), 0o644) }},
		{"missing", func(t *testing.T, p string) { os.Remove(p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := committed(t, 6, 100)
			for i := range 2 {
				tc.damage(t, filepath.Join(dir, shardName(i), manifestName))
			}
			c, lb := openCache(t, dir, 64<<20, 2)
			if s := c.Stats(); s.Corrupt != 2 || s.Entries != 6 || !lb.has("rebuilt") {
				t.Fatalf("stats %+v, log %q", s, lb)
			}
			for i := range 6 {
				mustGet(t, c, key(i), 100)
			}
			if _, _, err := c.shards[0].read(); err != nil {
				t.Fatalf("manifest not rewritten: %v", err)
			}
		})
	}
}

// A manifest damaged while a process has the dir open is noticed at that process's next
// miss, counted once, and rebuilt.
func TestManifestDamagedWhileOpen(t *testing.T) {
	dir, _ := committed(t, 4, 100)
	c, _ := openCache(t, dir, 64<<20, 2)
	k := keyInShard(0, 2, 100)
	p := filepath.Join(dir, "s00", manifestName)
	os.Remove(p)
	os.WriteFile(p, []byte("SHMLCMAN garbage that is long enough for a header"), 0o644)
	mustMiss(t, c, k)
	mustMiss(t, c, k)
	if s := c.Stats(); s.Corrupt != 1 {
		t.Fatalf("Corrupt = %d, want 1", s.Corrupt)
	}
	for i := range 4 {
		mustGet(t, c, key(i), 100)
	}
}

func TestStrayFilesAreCountedAndRemoved(t *testing.T) {
	dir, _ := committed(t, 4, 100)
	s0 := filepath.Join(dir, "s00")
	bad := key(99).String() + entrySuffix
	write := func(name, body string) { os.WriteFile(filepath.Join(s0, name), []byte(body), 0o644) }
	write("junk", "hello")
	write("x.tmp", "not a temp name")
	write(bad, "not an entry")
	write(key(98).String()+entrySuffix, string(make([]byte, 8192))) // zeros
	deadTemp := key(97).String() + ".1.1.8192.tmp"                  // unheld: its writer died
	write(deadTemp, "partial")
	os.Mkdir(filepath.Join(s0, "somedir"), 0o755)

	c, _ := openCache(t, dir, 64<<20, 2)
	if s := c.Stats(); s.Corrupt != 4 || s.Entries != 4 {
		t.Fatalf("stats %+v, want 4 corrupt (junk, x.tmp, two bad entries) and 4 entries", s)
	}
	for _, n := range []string{"junk", "x.tmp", bad, deadTemp} {
		if _, err := os.Stat(filepath.Join(s0, n)); err == nil {
			t.Errorf("%s left in place", n)
		}
	}
	if _, err := os.Stat(filepath.Join(s0, "somedir")); err != nil {
		t.Error("a dir that is not the cache's was removed")
	}
	for i := range 4 {
		mustGet(t, c, key(i), 100)
	}
	mustMiss(t, c, key(99))
}

// Records whose files were removed behind the cache's back are dropped: at Open, and by
// a process that has the dir open when it next asks for the key.
func TestRecordsOfMissingFilesAreDropped(t *testing.T) {
	dir, path := committed(t, 3, 100)
	live, _ := openCache(t, dir, 64<<20, 2)
	os.Remove(path)
	mustMiss(t, live, key(0))
	if s := live.Stats(); s.Entries != 2 || s.Corrupt != 0 {
		t.Fatalf("open process: %+v", s)
	}
	os.Remove(filepath.Join(dir, shardName(key(1).shard(2)), entryName(key(1))))
	live.Close()
	c, _ := openCache(t, dir, 64<<20, 2)
	if s := c.Stats(); s.Entries != 1 || s.Corrupt != 0 {
		t.Fatalf("new open: %+v", s)
	}
	mustGet(t, c, key(2), 100)
}

// A file cut short after it was mapped (by something outside the cache) makes the
// checksum read fault; validate turns that into a corrupt-entry error.
func TestFileShrunkAfterMappingIsAnErrorNotACrash(t *testing.T) {
	dir, path := committed(t, 1, 64<<10)
	c, _ := openCache(t, dir, 64<<20, 2)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	os.Truncate(path, headerSize+4096)
	_, err = c.validate(c.shard(key(0)), key(0), fileID{size: st.Size()}, mem)
	if !isCorrupt(err) {
		t.Fatalf("validate of a shrunk file: %v, want a corrupt-entry error", err)
	}
}
