package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
)

// A writer killed with its Writer open leaves a locked temp file and a reservation. The
// next Open removes both; the half-written key is a miss, the complete one a hit.
func TestWriterKilledMidWrite(t *testing.T) {
	dir := t.TempDir()
	cfg := roleCfg{Dir: dir, Size: 64 << 20, Shards: 2, Start: 10}
	p := testkit.Spawn(t, "hang-writer", cfg)
	p.Line(t, "writing", 20*time.Second)
	l, err := List(dir)
	if err != nil || len(l.Temps) != 1 || !l.Temps[0].Live {
		t.Fatalf("while writing: %v\n%s", err, l)
	}
	p.Kill()
	if l, _ = List(dir); len(l.Temps) != 1 || l.Temps[0].Live {
		t.Fatalf("after the kill the temp file should be there, unheld:\n%s", l)
	}

	c, _ := openCache(t, dir, 64<<20, 2)
	if tmp := temps(t, dir); len(tmp) != 0 {
		t.Fatalf("temp files left after Open: %v", tmp)
	}
	for i := range 2 {
		if n := pendingBytes(t, c, i); n != 0 {
			t.Fatalf("shard %d still reserves %d bytes for a dead writer", i, n)
		}
	}
	mustGet(t, c, key(10), sizesOf(key(10))...)
	mustMiss(t, c, key(11))
	if s := c.Stats(); s.Corrupt != 0 || s.Entries != 1 {
		t.Fatalf("stats %+v", s)
	}
	put(t, c, key(11), sizesOf(key(11))...)
	mustGet(t, c, key(11), sizesOf(key(11))...)
}

// A writer killed between its rename and its manifest write leaves a complete entry the
// manifest does not list. A process that already has the dir open adopts it at its next
// change of that shard; a new Open adopts it at once. Either way its CRC is checked on
// first use.
func TestWriterKilledBetweenRenameAndManifest(t *testing.T) {
	for _, reopen := range []bool{false, true} {
		name := map[bool]string{false: "live process", true: "new open"}[reopen]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			k := key(20)
			live, _ := openCache(t, dir, 64<<20, 2)
			p := testkit.Spawn(t, "hang-rename", roleCfg{Dir: dir, Size: 64 << 20, Shards: 2, Start: 20})
			p.Line(t, "renamed", 20*time.Second)
			p.Kill()
			final := filepath.Join(dir, shardName(k.shard(2)), entryName(k))
			if _, err := os.Stat(final); err != nil {
				t.Fatalf("renamed entry missing: %v", err)
			}
			l, _ := List(dir)
			if l.Entries != 1 || l.PerShard[k.shard(2)].Unlisted != 1 {
				t.Fatalf("want one unlisted entry:\n%s", l)
			}
			c := live
			if reopen {
				live.Close()
				c, _ = openCache(t, dir, 64<<20, 2)
			} else {
				mustMiss(t, c, k) // not listed yet
				put(t, c, keyInShard(k.shard(2), 2, 1000), 10)
			}
			mustGet(t, c, k, sizesOf(k)...)
			if s := c.Stats(); s.Corrupt != 0 || c.stats.checksums.Load() != 1 {
				t.Fatalf("stats %+v, %d checksums", s, c.stats.checksums.Load())
			}
			if pendingBytes(t, c, k.shard(2)) != 0 || len(temps(t, dir)) != 0 {
				t.Fatal("the dead writer's reservation or temp file survived")
			}
		})
	}
}
