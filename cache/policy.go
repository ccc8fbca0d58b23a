package cache

import (
	"bytes"
	"slices"
)

// Oracle tells eviction when an entry is next needed by this process: a position in the
// caller's order of uses (the plan), counted from any fixed origin; ok=false: this process
// will not need it again. For the key being created, NextUse is the use after the one
// that is creating it. It is called from Create with the shard's lock held, from any
// goroutine: it must be quick, safe for concurrent use, and must not call the Cache.
type Oracle interface {
	NextUse(Key) (pos uint64, ok bool)
}

// SetOracle switches eviction to Belady's rule driven by o; nil switches it back to LRU
// (what Mosaic Streaming does), for comparison.
func (c *Cache) SetOracle(o Oracle) {
	if o == nil {
		c.oracle.Store(nil)
		return
	}
	c.oracle.Store(&oracleBox{o})
}

type oracleBox struct{ o Oracle }

// cand is a resident entry that eviction may drop.
type cand struct {
	key  Key
	size int64
	pos  uint64 // next use (Belady)
	ok   bool   // has a next use (Belady)
	age  int64  // last use (LRU): smaller is older
}

// beladyFirst orders candidates for eviction under Belady's rule: no next use first
// (larger first: they free the most), then the furthest next use. Ties break on the key,
// so the cache and the simulator choose alike.
func beladyFirst(a, b *cand) bool {
	switch {
	case a.ok != b.ok:
		return !a.ok
	case a.ok && a.pos != b.pos:
		return a.pos > b.pos
	case a.size != b.size:
		return a.size > b.size
	}
	return bytes.Compare(a.key[:], b.key[:]) < 0
}

// lruFirst orders candidates oldest use first.
func lruFirst(a, b *cand) bool {
	if a.age != b.age {
		return a.age < b.age
	}
	return bytes.Compare(a.key[:], b.key[:]) < 0
}

// beladyMayEvict reports whether evicting c to admit an entry next needed at (pos, ok)
// can pay: c must be needed later than the new entry, or never. An entry that is never
// needed again is not worth any eviction.
func beladyMayEvict(c *cand, pos uint64, ok bool) bool {
	return ok && (!c.ok || c.pos > pos)
}

// victims picks entries that free at least need bytes, in the policy's order. false: the
// policy would rather not admit (nothing is to be evicted then). o == nil means LRU.
func victims(cands []cand, need int64, o Oracle, newKey Key) ([]cand, bool) {
	if need <= 0 {
		return nil, true
	}
	var pos uint64
	var ok bool
	if o != nil {
		pos, ok = o.NextUse(newKey)
		for i := range cands {
			cands[i].pos, cands[i].ok = o.NextUse(cands[i].key)
		}
		slices.SortFunc(cands, func(a, b cand) int { return order(beladyFirst, &a, &b) })
	} else {
		slices.SortFunc(cands, func(a, b cand) int { return order(lruFirst, &a, &b) })
	}
	var freed int64
	for i := range cands {
		if o != nil && !beladyMayEvict(&cands[i], pos, ok) {
			break
		}
		freed += cands[i].size
		if freed >= need {
			return cands[:i+1], true
		}
	}
	return nil, false
}

func order(first func(a, b *cand) bool, a, b *cand) int {
	switch {
	case first(a, b):
		return -1
	case first(b, a):
		return 1
	}
	return 0
}
