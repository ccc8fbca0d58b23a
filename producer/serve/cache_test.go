package serve

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shmloader/shmloader/cache"
)

// The batch streams are byte-identical with the cache off, cold (empty), partly warm (a
// dir filled under a budget too small for every row group) and fully warm, and a warm
// run maps every row group instead of decoding it.
func TestCacheNeverChangesABatch(t *testing.T) {
	off := serveAndRead(t, testConfig(t), Options{}, nil)
	dir := t.TempDir()
	run := func(size int64) ([]stream, string) {
		cfg := testConfig(t)
		cfg.Cache.Dir, cfg.Cache.Size, cfg.Cache.Shards = dir, size, 2
		cfg.Progress = 50 * time.Millisecond
		var log syncBuffer
		out := serveAndRead(t, cfg, Options{Log: &log}, nil)
		return out, log.String()
	}
	same := func(what string, got []stream) {
		t.Helper()
		for r := range off {
			if !slices.Equal(got[r].hashes, off[r].hashes) {
				t.Fatalf("%s: rank %d's stream differs from the run without a cache", what, r)
			}
		}
	}
	n := testPlan(t, testConfig(t)).RowGroups()
	filling, _ := run(600 << 10) // room for a few row groups only
	same("a cache too small for the data", filling)
	partly, log := run(0)
	same("partly warm cache", partly)
	if strings.Contains(log, "holds 0 of") || strings.Contains(log, fmt.Sprintf("holds %d of", n)) {
		t.Fatalf("the second run on a small cache's dir should find part of the data:\n%s", log)
	}
	cold := t.TempDir()
	dir = cold
	first, log := run(0)
	same("cold cache", first)
	if !strings.Contains(log, fmt.Sprintf("holds 0 of its %d row groups", n)) {
		t.Fatalf("a cold run's summary should say it holds none:\n%s", log)
	}
	warm, log := run(0)
	same("warm cache", warm)
	if !strings.Contains(log, fmt.Sprintf("holds %d of its %d row groups", n, n)) || !strings.Contains(log, " hits, 0 misses") || !strings.Contains(log, " 0 written") {
		t.Fatalf("a warm run should hold every row group, miss none and write none:\n%s", log)
	}
	l, err := cache.List(cold)
	if err != nil || l.Entries != n {
		t.Fatalf("cache ls after two runs: %v entries, %v", l.Entries, err)
	}
}

// syncBuffer is a bytes.Buffer that the status reporter and the rank loops may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
