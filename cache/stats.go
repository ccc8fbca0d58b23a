package cache

import (
	"sync/atomic"
	"time"
)

// Stats are this process's counters for one Cache. Reading them is a handful of atomic
// loads: safe and cheap from any goroutine.
type Stats struct {
	Hits, Misses  int64 // Gets that served an entry / that did not
	HitBytes      int64 // bytes on disk of the entries served
	Evictions     int64 // entries this process evicted to admit others
	Refused       int64 // Creates the policy refused (ErrNotAdmitted)
	Corrupt       int64 // corrupt entries, manifests and stray files found and dropped
	WriteErrors   int64 // Creates and Commits that failed on I/O, ErrNoSpace included
	ResidentBytes int64 // bytes of committed entries, as this process last read the manifests
	Entries       int64 // committed entries, likewise
}

// counters back Stats; every field is written by any goroutine of the Cache.
type counters struct {
	hits, misses, hitBytes         atomic.Int64
	evictions, refused, corrupt    atomic.Int64
	writeErrors, resident, entries atomic.Int64
	checksums                      atomic.Int64 // data CRCs Get computed: not in Stats, tests read it
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	s := &c.stats
	return Stats{
		Hits: s.hits.Load(), Misses: s.misses.Load(), HitBytes: s.hitBytes.Load(),
		Evictions: s.evictions.Load(), Refused: s.refused.Load(), Corrupt: s.corrupt.Load(),
		WriteErrors: s.writeErrors.Load(), ResidentBytes: s.resident.Load(), Entries: s.entries.Load(),
	}
}

// clock is the process's LRU clock: wall nanoseconds, strictly increasing, so ages of
// entries this process used compare with commit times other processes recorded.
var clock atomic.Int64

func tick() int64 {
	now := time.Now().UnixNano()
	for {
		old := clock.Load()
		n := max(now, old+1)
		if clock.CompareAndSwap(old, n) {
			return n
		}
	}
}
