package plan

import (
	"fmt"
	"sort"
)

// An epoch may start at any global batch base (0 unless a job resumes under another
// world size): node k then serves its global batches g >= base, those of its partitions,
// in increasing order; its j-th goes to local rank j mod R as step j div R. In the
// rounds, batch g belongs to node g mod n, so a node's j-th batch from base is
// base + ((k - base) mod n) + j·n, and after s steps the world has consumed exactly the
// global batches [base, base + s·n·R).

// nodeMain is the number of this node's batches in the rounds from base on.
func (p *Plan) nodeMain(base uint64) uint64 {
	m := p.mainBatches()
	if base >= m {
		return 0
	}
	first := base + p.phase(base)
	if first >= m {
		return 0
	}
	return (m-first-1)/uint64(p.in.Nodes) + 1
}

// phase is the distance from base to this node's first batch at or after it.
func (p *Plan) phase(base uint64) uint64 {
	n := uint64(p.in.Nodes)
	return (uint64(p.in.Node) + n - base%n) % n
}

// nodeTail lists this node's tail batches at or after base (without drop_last).
func (p *Plan) nodeTail(base uint64) []uint64 {
	return p.myTail[sort.Search(len(p.myTail), func(i int) bool { return p.myTail[i] >= base }):]
}

// nodeBatches is the number of batches this node serves in an epoch started at base.
func (p *Plan) nodeBatches(base uint64) uint64 {
	if p.in.DropLast {
		return p.steps(base) * uint64(p.in.Ranks)
	}
	return p.nodeMain(base) + uint64(len(p.nodeTail(base)))
}

// Steps is the number of batches local rank r gets in an epoch started at global batch 0.
func (p *Plan) Steps(rank int) uint64 { return p.StepsFrom(rank, 0) }

// StepsFrom is the number of batches local rank r gets in an epoch started at base.
// With drop_last every rank of every node gets the same number.
func (p *Plan) StepsFrom(rank int, base uint64) uint64 {
	if p.in.DropLast {
		return p.steps(base)
	}
	n, r, R := p.nodeBatches(base), uint64(rank), uint64(p.in.Ranks)
	if r >= n {
		return 0
	}
	return (n-r-1)/R + 1
}

// Global is the global batch index of local rank's step in an epoch started at 0.
func (p *Plan) Global(rank int, step uint64) uint64 { return p.GlobalFrom(rank, 0, step) }

// GlobalFrom is the global batch of local rank's step in an epoch started at base; step
// must be below StepsFrom(rank, base).
func (p *Plan) GlobalFrom(rank int, base, step uint64) uint64 {
	j := step*uint64(p.in.Ranks) + uint64(rank)
	if m := p.nodeMain(base); j >= m {
		return p.nodeTail(base)[j-m]
	}
	return base + p.phase(base) + j*uint64(p.in.Nodes)
}

// Resume translates a position saved under another layout: step of an epoch started at
// savedBase in a world of savedWorld trainers, which had consumed the global batches
// [savedBase, savedBase + step·savedWorld). It returns where this layout continues:
// a step of an epoch started at base. The same layout always gets (savedBase, step).
func (p *Plan) Resume(savedWorld, savedBase, step uint64) (base, newStep uint64, err error) {
	if savedWorld == p.world {
		return savedBase, step, nil
	}
	if savedWorld == 0 {
		return 0, 0, fmt.Errorf("saved state has a world size of 0")
	}
	g := savedBase + step*savedWorld
	if !p.in.DropLast && g > p.mainBatches() {
		return 0, 0, fmt.Errorf("the state was saved at global batch %d, among the last uneven batches of an epoch "+
			"(drop_last: false, past batch %d): it resumes only under the world size it was saved with (%d trainers), "+
			"or from the start of the next epoch", g, p.mainBatches(), savedWorld)
	}
	if g%p.world == 0 {
		return 0, g / p.world, nil
	}
	return g, 0, nil
}

// ElasticLimit is the latest global batch an epoch may start at: Resume refuses a later
// position (with drop_last false, the uneven last batches resume only under the world
// size that saved them), and with drop_last every step ends before it.
func (p *Plan) ElasticLimit() uint64 { return p.mainBatches() }

// World is the number of trainers of the job: nodes × ranks.
func (p *Plan) World() uint64 { return p.world }

// served is the range [lo, hi) of batches of partition i that an epoch started at base
// serves (on whichever node holds i).
func (p *Plan) served(i int, base uint64) (lo, hi int64) {
	P := int64(p.in.Partitions)
	end := p.mainBatches()
	if p.in.DropLast {
		end = base + p.steps(base)*p.world
	}
	ceilDiv := func(a, b int64) int64 { return (a + b - 1) / b }
	mainLo := int64(0)
	if b := int64(base); b > int64(i) {
		mainLo = ceilDiv(b-int64(i), P)
	}
	mainHi := min(p.rounds, max(ceilDiv(int64(end)-int64(i), P), 0))
	if p.in.DropLast {
		return min(mainLo, mainHi), mainHi
	}
	lo, hi = mainLo, p.partLen[i]
	if mainLo >= p.rounds { // base is in the tail
		lo = p.partLen[i]
		for j := p.rounds; j < p.partLen[i]; j++ {
			if p.tailAt[ref{i, j}] >= base {
				lo = j
				break
			}
		}
	}
	return lo, hi
}

// globalOf is the global index of batch j of partition i.
func (p *Plan) globalOf(i int, j int64) uint64 {
	if j < p.rounds {
		return uint64(j)*uint64(p.in.Partitions) + uint64(i)
	}
	return p.tailAt[ref{i, j}]
}

// Spans lists where global batch g's rows come from, in batch order.
func (p *Plan) Spans(ep *Epoch, g uint64) []Span {
	r := p.locate(g)
	ws := ep.Parts[r.p]
	lo := r.j * int64(p.in.BatchSize)
	hi := lo + int64(p.BatchRows(g))
	i := sort.Search(len(ws), func(i int) bool { return ws[i].Start+ws[i].Rows > lo })
	var out []Span
	for ; i < len(ws) && ws[i].Start < hi; i++ {
		w := &ws[i]
		out = append(out, Span{Part: r.p, Window: i, From: max(lo, w.Start) - w.Start, To: min(hi, w.Start+w.Rows) - w.Start})
	}
	return out
}
