package filter

import (
	"cmp"
	"github.com/shmloader/shmloader/producer/dataset"
	"slices"
)

// MayMatch says whether any row of a row group can pass, from its footer stats
// (stats[col] for each of Columns(); a missing entry or HasMinMax=false means unknown).
// It never returns false when a row could pass.
func (f *Filter) MayMatch(stats map[string]dataset.Stats) bool {
	if f == nil {
		return true
	}
	for i := range f.preds {
		if st, ok := stats[f.preds[i].col]; ok && !f.preds[i].mayMatch(st) {
			return false
		}
	}
	return true
}

func (p *pred) mayMatch(st dataset.Stats) bool {
	allNull := st.HasNullCount && st.Rows > 0 && st.NullCount >= st.Rows
	switch p.code {
	case opNull:
		return !st.HasNullCount || st.NullCount > 0
	case opNotNull:
		return !allNull
	}
	if allNull {
		return false
	}
	if !st.HasMinMax {
		return true
	}
	switch {
	case p.class == cInt && st.Kind == dataset.KindInt && st.MinI <= st.MaxI:
		if p.setOp() {
			return mayMatchSet(p, p.keys, st.MinI, st.MaxI)
		}
		return mayMatchRange(p, st.MinI, st.MaxI)
	case p.class == cFloat && st.Kind == dataset.KindFloat && st.MinF <= st.MaxF:
		// NaN rows are not in the statistics and pass != and not_in.
		if p.negate {
			return true
		}
		if p.setOp() {
			return mayMatchSet(p, p.floats, st.MinF, st.MaxF)
		}
		return mayMatchCmp(p.code, p.c, st.MinF, st.MaxF)
	case p.class == cString && st.Kind == dataset.KindString && st.MinS <= st.MaxS:
		if p.setOp() {
			return mayMatchSet(p, p.strs, st.MinS, st.MaxS)
		}
		if p.code == opNe {
			return st.MinS != st.MaxS || st.MinS != p.s
		}
		return mayMatchCmp(p.code, p.s, st.MinS, st.MaxS)
	}
	// uint64, bool, float16, a NaN bound (min <= max fails), or stats of another kind.
	return true
}

// mayMatchRange: some key in [min, max] passes the range test [lo, hi] (negated: is
// outside it).
func mayMatchRange(p *pred, lo, hi int64) bool {
	if p.negate {
		return lo < p.lo || hi > p.hi
	}
	return p.lo <= p.hi && p.lo <= hi && p.hi >= lo
}

// mayMatchSet: some value of [min, max] is in sorted set (negated: is not in it, which
// fails only when min == max and that value is in the set).
func mayMatchSet[T cmp.Ordered](p *pred, set []T, lo, hi T) bool {
	i, _ := slices.BinarySearch(set, lo)
	if p.negate {
		return lo != hi || i == len(set) || set[i] != lo
	}
	return i < len(set) && set[i] <= hi
}

// mayMatchCmp: some value of [lo, hi] satisfies "x op c" (not !=).
func mayMatchCmp[T cmp.Ordered](op opCode, c, lo, hi T) bool {
	switch op {
	case opEq:
		return lo <= c && c <= hi
	case opLt:
		return lo < c
	case opLe:
		return lo <= c
	case opGt:
		return hi > c
	case opGe:
		return hi >= c
	}
	return true
}
