package cache

import (
	"container/heap"
	"fmt"
)

// SimResult counts what a policy did over a trace.
type SimResult struct {
	Hits, Misses        int64 // accesses served from the cache / not
	HitBytes, MissBytes int64 // their bytes
	Evictions           int64 // entries dropped to admit others
	Refused             int64 // misses not admitted (the policy's choice, or larger than the capacity)
}

// HitRate is Hits over all accesses (0 for an empty trace).
func (r SimResult) HitRate() float64 {
	if n := r.Hits + r.Misses; n > 0 {
		return float64(r.Hits) / float64(n)
	}
	return 0
}

// Simulate replays trace through one cache of capacity bytes (no shards) and counts hits.
// policy "belady" evicts by the trace's own future, with the same rule and order as a
// Cache with an Oracle; "lru" evicts the least recently used entry, as a Cache without
// one. Every miss is offered for admission. An unknown policy panics: it is a
// programming error, not input.
func Simulate(trace []Key, size func(Key) int64, capacity int64, policy string) SimResult {
	var first func(a, b *cand) bool
	switch policy {
	case "belady":
		first = beladyFirst
	case "lru":
		first = lruFirst
	default:
		panic(fmt.Sprintf("cache.Simulate: unknown policy %q (want \"belady\" or \"lru\")", policy))
	}
	next := nextUses(trace)
	h := &simHeap{first: first}
	resident := map[Key]*simEntry{}
	var r SimResult
	var used int64
	for i, k := range trace {
		pos, ok := next[i], next[i] >= 0
		if e, hit := resident[k]; hit {
			r.Hits++
			r.HitBytes += e.size
			e.pos, e.ok, e.age = uint64(pos), ok, int64(i)
			heap.Fix(h, e.idx)
			continue
		}
		s := size(k)
		r.Misses++
		r.MissBytes += s
		if s > capacity {
			r.Refused++
			continue
		}
		var out []*simEntry
		var freed int64
		for need := used + s - capacity; freed < need && h.Len() > 0; {
			if policy == "belady" && !beladyMayEvict(&h.items[0].cand, uint64(pos), ok) {
				break
			}
			e := heap.Pop(h).(*simEntry)
			out = append(out, e)
			freed += e.size
		}
		if used+s-freed > capacity {
			for _, e := range out {
				heap.Push(h, e)
			}
			r.Refused++
			continue
		}
		for _, e := range out {
			delete(resident, e.key)
			used -= e.size
			r.Evictions++
		}
		e := &simEntry{cand: cand{key: k, size: s, pos: uint64(pos), ok: ok, age: int64(i)}}
		heap.Push(h, e)
		resident[k] = e
		used += s
	}
	return r
}

// nextUses gives, for each position, the next position of the same key, or -1.
func nextUses(trace []Key) []int {
	next := make([]int, len(trace))
	last := map[Key]int{}
	for i := len(trace) - 1; i >= 0; i-- {
		next[i] = -1
		if j, ok := last[trace[i]]; ok {
			next[i] = j
		}
		last[trace[i]] = i
	}
	return next
}

type simEntry struct {
	cand
	idx int
}

// simHeap keeps resident entries with the next to evict on top.
type simHeap struct {
	items []*simEntry
	first func(a, b *cand) bool
}

func (h *simHeap) Len() int           { return len(h.items) }
func (h *simHeap) Less(i, j int) bool { return h.first(&h.items[i].cand, &h.items[j].cand) }
func (h *simHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].idx, h.items[j].idx = i, j
}
func (h *simHeap) Push(x any) {
	e := x.(*simEntry)
	e.idx = len(h.items)
	h.items = append(h.items, e)
}
func (h *simHeap) Pop() any {
	e := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return e
}
