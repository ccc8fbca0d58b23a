package cache

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
)

// One process's commits are hits for another, including one that had the dir open
// before they were made (it notices through the manifest's generation).
func TestCommitsOfOneProcessAreHitsForAnother(t *testing.T) {
	dir := t.TempDir()
	c, _ := openCache(t, dir, 64<<20, 4)
	for i := range 40 { // learn the empty manifests first
		mustMiss(t, c, key(i))
	}
	cfg := roleCfg{Dir: dir, Size: 64 << 20, Shards: 4, Keys: 40}
	testkit.Spawn(t, "write", cfg).Line(t, "done", 20*time.Second)
	r := testkit.Spawn(t, "read", cfg)
	if got := r.Line(t, "hits", 20*time.Second); got != "hits 40" {
		t.Fatalf("second process: %q, want all 40 hits", got)
	}
	for i := range 40 {
		mustGet(t, c, key(i), sizesOf(key(i))...)
	}
}

// Two processes write and read one dir at once under a budget that forces evictions:
// every served entry holds its key's bytes (children check and print BAD otherwise), and
// the committed bytes never exceed the budget.
func TestTwoProcessesShareADirUnderABudget(t *testing.T) {
	dir := t.TempDir()
	const size = 300_000
	c, _ := openCache(t, dir, size, 4) // creates the dir; also a third reader
	procs := []*testkit.Proc{
		testkit.Spawn(t, "mixed", roleCfg{Dir: dir, Size: size, Shards: 4, Seed: 1, Keys: 60, Ops: 400}),
		testkit.Spawn(t, "mixed", roleCfg{Dir: dir, Size: size, Shards: 4, Seed: 2, Keys: 60, Ops: 400}),
	}
	done := make(chan Stats, len(procs))
	for _, p := range procs {
		go func() {
			var s Stats
			l := p.Line(t, "stats", 60*time.Second)
			json.Unmarshal([]byte(strings.TrimPrefix(l, "stats ")), &s)
			done <- s
		}()
	}
	var all []Stats
	for len(all) < len(procs) {
		select {
		case s := <-done:
			all = append(all, s)
		case <-time.After(5 * time.Millisecond):
		}
		if n := diskBytes(t, dir); n > size {
			t.Fatalf("%d bytes of entries on disk, budget %d", n, size)
		}
		for i := range 60 {
			if e, ok := c.Get(key(i)); ok {
				if err := intact(key(i), e, sizesOf(key(i))); err != nil {
					t.Fatalf("parent served a bad entry: %v", err)
				}
				e.Close()
			}
		}
	}
	var hits, evictions, commits int64
	for _, s := range all {
		hits += s.Hits
		evictions += s.Evictions
		commits += s.Misses - s.Refused
		if s.Corrupt != 0 || s.WriteErrors != 0 {
			t.Fatalf("child stats %+v", s)
		}
	}
	if hits == 0 || evictions == 0 || c.Stats().Hits == 0 {
		t.Fatalf("children %+v, parent %+v: want hits and evictions", all, c.Stats())
	}
	l, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Bytes > size || len(l.Temps) != 0 || len(l.Corrupt) != 0 {
		t.Fatalf("listing after both exited:\n%s", l)
	}
	for _, su := range l.PerShard {
		if su.Unlisted != 0 || su.Manifest != "ok" {
			t.Fatalf("shard %s: %+v", su.Name, su)
		}
	}
	t.Logf("children: %d hits, %d evictions, %d commits", hits, evictions, commits)
}

// pidOf parses "open <pid>".
func pidOf(t *testing.T, line string) int {
	p, err := strconv.Atoi(strings.TrimPrefix(line, "open "))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
