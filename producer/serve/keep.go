package serve

import (
	"sync"

	"github.com/shmloader/shmloader/cache"
)

// mappings keeps cache entries mapped after their window goes, up to limit bytes of
// entries no window uses, so that a later epoch of this process reads a row group
// without mapping it again: mapping an entry (MAP_POPULATE, a page-table entry per 4 KiB
// of page cache) and unmapping it were 31 % of a warm epoch's CPU. The kept pages are the
// page cache's, shared and reclaimable, but they count in serve's RSS; page tables cost
// about 2 MB per GB kept. An entry this process no longer sees in the cache (evicted,
// dropped) is closed instead of reused, so its disk space is not held for long.
type mappings struct {
	cache *cache.Cache
	limit int64

	mu   sync.Mutex
	kept map[int]*mapped // by row group
	idle int64           // bytes of kept entries with no user
	tick uint64
}

// maxKeptMapped caps the bytes of idle entries kept mapped: 16 GiB costs about 32 MiB
// of page tables. Below it, a node keeps all of its data's entries mapped.
const maxKeptMapped = 16 << 30

type mapped struct {
	e    *cache.Entry
	b    block // the entry viewed as the row group's block (free unset)
	refs int
	used uint64 // tick of the last release, for dropping the least recently used
}

// reuse returns row group g's block from a kept mapping, counted as a cache hit, or false.
func (m *mappings) reuse(g int, key cache.Key) (block, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.kept[g]
	if k == nil {
		return block{}, false
	}
	if !m.cache.Reuse(key, k.e.Size()) {
		if k.refs == 0 {
			m.drop(g, k)
		}
		return block{}, false
	}
	if k.refs == 0 {
		m.idle -= k.e.Size()
	}
	k.refs++
	return m.view(g, k), true
}

// keep registers entry e, viewed as block b of row group g, and returns the block to
// serve from; its free hands the mapping back for later reuse.
func (m *mappings) keep(g int, e *cache.Entry, b block) block {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.kept[g]; old != nil {
		if old.refs > 0 { // another window maps it already: serve this one on its own
			b.free = e.Close
			return b
		}
		m.drop(g, old)
	}
	k := &mapped{e: e, b: b, refs: 1}
	m.kept[g] = k
	return m.view(g, k)
}

func (m *mappings) view(g int, k *mapped) block {
	b := k.b
	b.free = func() { m.release(g, k) }
	return b
}

func (m *mappings) release(g int, k *mapped) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.refs--; k.refs > 0 {
		return
	}
	if m.kept[g] != k { // replaced meanwhile
		k.e.Close()
		return
	}
	m.tick++
	k.used = m.tick
	m.idle += k.e.Size()
	for m.idle > m.limit {
		var lru *mapped
		var at int
		for i, c := range m.kept {
			if c.refs == 0 && (lru == nil || c.used < lru.used) {
				lru, at = c, i
			}
		}
		m.drop(at, lru)
	}
}

// drop closes idle kept entry k of row group g. m.mu is held.
func (m *mappings) drop(g int, k *mapped) {
	m.idle -= k.e.Size()
	k.e.Close()
	delete(m.kept, g)
}

// close unmaps every idle kept entry; those still in use are closed by their release.
func (m *mappings) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for g, k := range m.kept {
		if k.refs == 0 {
			m.drop(g, k)
		} else {
			delete(m.kept, g)
		}
	}
}
