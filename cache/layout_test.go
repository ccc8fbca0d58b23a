package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirLayout(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 64<<20, 4)
	b, err := os.ReadFile(filepath.Join(dir, infoName))
	if err != nil || string(b) != fmt.Sprintf("shmloader cache\nformat %d\nshards 4\n", FormatVersion) {
		t.Fatalf("info file %q, %v", b, err)
	}
	for i := range 4 {
		for _, f := range []string{lockName, manifestName} {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("s%02d", i), f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, dirLock)); err != nil {
		t.Fatal(err)
	}

	k, sizes := key(3), []int64{100, 7, 5000}
	w, err := c.Create(k, Meta{Config: "c1", Label: "part-0 rg 3", Rows: 9}, sizes)
	if err != nil {
		t.Fatal(err)
	}
	shardDir := filepath.Join(dir, shardName(k.shard(4)))
	tmp := temps(t, dir)
	if len(tmp) != 1 || filepath.Dir(tmp[0]) != shardDir || !strings.Contains(tmp[0], fmt.Sprintf(".%d.", os.Getpid())) {
		t.Fatalf("temp files %v, want one in %s named with pid %d", tmp, shardDir, os.Getpid())
	}
	fill(k, w.Tensors())
	e, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	path := filepath.Join(shardDir, k.String()+".ent")
	h, st, err := readHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.key != k || h.rows != 9 || h.config != "c1" || h.label != "part-0 rg 3" || st.Size != h.lay.size {
		t.Fatalf("header %+v", h)
	}
	for i, off := range h.lay.offs {
		if off%64 != 0 || off < headerSize || h.lay.lens[i] != sizes[i] {
			t.Fatalf("region %d at %d, %d bytes", i, off, h.lay.lens[i])
		}
	}
	if len(temps(t, dir)) != 0 {
		t.Fatal("temp file left after Commit")
	}
}

func TestShardIsFixedByTheKey(t *testing.T) {
	dir := t.TempDir()
	a, _ := openCache(t, dir, 64<<20, 8)
	for i := range 20 {
		put(t, a, key(i), 10)
	}
	a.Close()
	for i := range 20 {
		k := key(i)
		want := filepath.Join(dir, shardName(k.shard(8)), entryName(k))
		if _, err := os.Stat(want); err != nil {
			t.Fatalf("key %d not in its shard: %v", i, err)
		}
	}
	b, _ := openCache(t, dir, 64<<20, 8)
	for i := range 20 {
		mustGet(t, b, key(i), 10)
	}
}

func TestDirKeepsItsShardCount(t *testing.T) {
	dir := t.TempDir()
	a, _ := openCache(t, dir, 64<<20, 4)
	put(t, a, key(1), 10)
	a.Close()
	b, lb := openCache(t, dir, 64<<20, 8)
	if b.Shards() != 4 || !lb.has("made with 4 shards") {
		t.Fatalf("shards %d, log %q", b.Shards(), lb)
	}
	mustGet(t, b, key(1), 10)
	if _, err := os.Stat(filepath.Join(dir, "s04")); err == nil {
		t.Fatal("a fifth shard was made")
	}
}

func TestDirOfAnotherFormatIsRefusedThenCleared(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, infoName), []byte("shmloader cache\nformat 1\nshards 4\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "s00"), 0o755)
	os.WriteFile(filepath.Join(dir, "s00", "whatever-v1-wrote"), []byte("v1 bytes"), 0o644)
	_, err := Open(Options{Dir: dir, Size: 1 << 20})
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("Open: %v, want ErrFormat", err)
	}
	for _, want := range []string{dir, "format 1", fmt.Sprintf("reads format %d", FormatVersion), "cache clear"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "s00", "whatever-v1-wrote")); err != nil {
		t.Fatal("Open touched a dir of another format")
	}
	l, err := List(dir)
	if err != nil || l.Format != 1 || len(l.OtherVersion) != 1 {
		t.Fatalf("List: %+v, %v", l, err)
	}
	if err := Clear(dir); err != nil {
		t.Fatal(err)
	}
	c, _ := openCache(t, dir, 1<<20, 2)
	put(t, c, key(1), 10)
	mustGet(t, c, key(1), 10)
}

func TestEntryOfAnotherVersionIsAMissNotCorruption(t *testing.T) {
	dir := t.TempDir()
	a, _ := openCache(t, dir, 64<<20, 1)
	k := key(1)
	put(t, a, k, 10)
	a.Close()
	path := filepath.Join(dir, "s00", entryName(k))
	patch(t, path, offVersion, []byte{FormatVersion + 1, 0, 0, 0})
	b, _ := openCache(t, dir, 64<<20, 1)
	mustMiss(t, b, k)
	if s := b.Stats(); s.Corrupt != 0 {
		t.Fatalf("another version counted as corrupt: %+v", s)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("entry of another version left in place")
	}
}

func TestInfoFileParser(t *testing.T) {
	v := fmt.Sprintf("shmloader cache\nformat %d\n", FormatVersion)
	for _, tc := range []struct {
		in   string
		want error
	}{
		{v + "shards 16\n", nil},
		{v + "shards 16\nfuture 3\n", nil},
		{"shmloader cache\nformat 7\nshards 16\n", ErrFormat},
		{"shmloader cache\nformat 1\nshards 16\n", ErrFormat}, // CRC-32C entries: refused, not misread
		{"shmloader cache\nshards 16\n", ErrFormat},
		{v + "shards 0\n", ErrBadRecord},
		{v + "shards 1000\n", ErrBadRecord},
		{"shmloader cache\nformat x\n", ErrBadRecord},
		{"something else\n", ErrBadMagic},
		{"", ErrBadMagic},
	} {
		if _, err := parseInfo([]byte(tc.in)); !errors.Is(err, tc.want) && (err != nil || tc.want != nil) {
			t.Errorf("parseInfo(%q): %v, want %v", tc.in, err, tc.want)
		}
	}
}
