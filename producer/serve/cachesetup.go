package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/cache"
	"github.com/shmloader/shmloader/internal/units"
)

// openStore sets up where decoded row groups live: the cache when cache.dir is set and
// usable, anonymous memory otherwise (with a warning that says why).
func (s *server) openStore() {
	s.store = &store{anon: s.blocks, warn: s.logf, committed: &s.stats.written}
	c := s.cfg.Cache
	if c.Dir == "" {
		return
	}
	var groups []int
	for _, p := range s.plan.NodePartitions() {
		groups = append(groups, s.plan.PartitionRowGroups(p)...)
	}
	keys, meta := entryKeys(s.src.ds, s.cfg.RowHashInput(), groups)
	// The budget is split evenly between shards: enough for all of this node's data is
	// the fullest shard's need times the shards.
	perShard := make([]int64, c.Shards)
	s.cacheNeed = 0
	for _, g := range groups {
		n := entryBytes(s.blocks.rows[g], s.blocks.layout.stride)
		s.cacheNeed += n
		perShard[keys[g].Shard(c.Shards)] += n
	}
	size := c.Size
	if size == 0 {
		size = slices.Max(perShard) * int64(c.Shards)
		if free := freeBytes(c.Dir); free > 0 {
			size = min(size, free/2)
		}
	}
	cc, err := cache.Open(cache.Options{Dir: c.Dir, Size: max(size, 1), Shards: c.Shards,
		Log: func(format string, args ...any) { s.logf("warning: "+format, args...) }})
	if err != nil {
		s.logf("warning: cache: %v; serving uncached (every epoch decodes again)", err)
		return
	}
	s.store.cache, s.store.budget = cc, max(size, 1)
	s.store.mapped = &mappings{cache: cc, limit: min(s.cacheNeed, maxKeptMapped), kept: map[int]*mapped{}}
	s.store.keys, s.store.meta = keys, meta
	s.store.index = make(map[cache.Key]int, len(groups))
	for _, g := range groups {
		s.store.index[s.store.keys[g]] = g
	}
	cc.SetOracle(s)
}

// entryBytes is the size of a cache entry of rows records: header page, then the
// records padded to 64 bytes (cache/doc.go).
func entryBytes(rows int64, stride int) int64 {
	return 4096 + (rows*int64(stride)+63)&^63
}

// freeBytes is the space free to this user on the file system that holds dir (or would:
// its nearest existing ancestor); 0 if unknown.
func freeBytes(dir string) int64 {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st unix.Statfs_t
		if _, err := os.Stat(d); err == nil && unix.Statfs(d, &st) == nil {
			return int64(st.Bavail) * st.Bsize
		}
		if d == filepath.Dir(d) {
			return 0
		}
	}
}

// NextUse is the cache's oracle: the position (see position) at which this node next
// reads row group key after the windows already started, the ones already in memory.
// Called with a cache shard locked: it only reads the plan.
func (s *server) NextUse(key cache.Key) (uint64, bool) {
	g, ok := s.store.index[key]
	if !ok {
		return 0, false
	}
	h := s.windows.frontier.Load()
	for e := h >> 40; e < h>>40+3; e++ {
		if s.cfg.Epochs != 0 && e >= s.cfg.Epochs {
			break
		}
		if first, ok := s.order(e).rgFirst[g]; ok {
			if p := position(e, first); p > h {
				return p, true
			}
		}
	}
	return 0, false
}

// cacheSummary says at start-up whether the cache is on and how much of this node's
// data it holds already.
func (s *server) cacheSummary() string {
	c := s.store.cache
	if c == nil {
		if s.cfg.Cache.Dir == "" {
			return "cache: off (cache.dir is empty): every epoch decodes its row groups again"
		}
		return "cache: off (see the warning above): every epoch decodes its row groups again"
	}
	var n, total int
	var bytes int64
	for g, k := range s.store.index {
		total++
		if c.Has(g) {
			n++
			bytes += entryBytes(s.blocks.rows[k], s.blocks.layout.stride)
		}
	}
	config := ""
	for _, g := range s.store.index {
		config = s.store.meta[g].Config // the same for every row group: `shmloader cache ls` lists it
		break
	}
	line := fmt.Sprintf("cache %s (config %s): budget %s for this node's %s; holds %d of its %d row groups (%s) already",
		c.Dir(), config, units.Bytes(uint64(c.Budget())), units.Bytes(uint64(s.cacheNeed)), n, total, units.Bytes(uint64(bytes)))
	if c.Budget() < s.cacheNeed {
		line += "\nserve: warning: the cache cannot hold all of this node's data: the row groups needed soonest are kept, later epochs decode the rest (raise cache.size, or free disk space)"
	}
	return line
}

// cacheStatus is the status line's cache part: this run's hits, misses, bytes served
// from the cache and evictions.
func (s *server) cacheStatus() string {
	if s.store.cache == nil {
		return ""
	}
	st := s.store.cache.Stats()
	return fmt.Sprintf(" | cache hit %d miss %d served %s evict %d", st.Hits, st.Misses, units.Bytes(uint64(st.HitBytes)), st.Evictions)
}
