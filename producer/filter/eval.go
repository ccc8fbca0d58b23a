package filter

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
)

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

// int tests key k (an integer, or a uint64's uKey).
func (p *pred) int(k int64) bool {
	if p.setOp() {
		return inKeys(p.keys, k) != p.negate
	}
	return (p.lo <= k && k <= p.hi) != p.negate
}

func evalInts[T integer](p *pred, keep []bool, vals []T) {
	if !p.setOp() && !p.negate {
		// The common case, a range test, without the per-value branches of p.int.
		for i, v := range vals {
			keep[i] = keep[i] && p.lo <= int64(v) && int64(v) <= p.hi
		}
		return
	}
	for i, v := range vals {
		keep[i] = keep[i] && p.int(int64(v))
	}
}

func evalUints(p *pred, keep []bool, vals []uint64) {
	for i, v := range vals {
		keep[i] = keep[i] && p.int(uKey(v))
	}
}

func evalBools(p *pred, keep []bool, a *array.Boolean) {
	for i := range keep {
		k := int64(0)
		if a.Value(i) {
			k = 1
		}
		keep[i] = keep[i] && p.int(k)
	}
}

// float tests x under IEEE rules: NaN fails all but != and not_in.
func (p *pred) float(x float64) bool {
	if ok, set := compare(p.code, x, p.c); !set {
		return ok
	}
	return inFloats(p.floats, x) != p.negate
}

// compare applies a comparison op to x and c; set is true for in and not_in, which
// the caller answers from its sorted values.
func compare[T float64 | string](code opCode, x, c T) (ok, set bool) {
	switch code {
	case opEq:
		return x == c, false
	case opNe:
		return x != c, false
	case opLt:
		return x < c, false
	case opLe:
		return x <= c, false
	case opGt:
		return x > c, false
	case opGe:
		return x >= c, false
	}
	return false, true
}

func evalFloats[T float32 | float64](p *pred, keep []bool, vals []T) {
	for i, v := range vals {
		keep[i] = keep[i] && p.float(float64(v))
	}
}

// strValues reads string and binary arrays alike, without copying.
type strValues interface{ Value(i int) string }

type binValues struct{ *array.Binary }
type largeBinValues struct{ *array.LargeBinary }

func (b binValues) Value(i int) string      { return b.ValueString(i) }
func (b largeBinValues) Value(i int) string { return b.ValueString(i) }

// str compares bytewise.
func (p *pred) str(s string) bool {
	if ok, set := compare(p.code, s, p.s); !set {
		return ok
	}
	_, found := slices.BinarySearch(p.strs, s)
	return found != p.negate
}

// evalStrings checks the offsets first: Arrow checked only the last one, and one that
// goes down would make Value panic.
func evalStrings[O int32 | int64](p *pred, keep []bool, a strValues, offs []O) error {
	for k := 1; k < len(offs); k++ {
		if offs[k] < offs[k-1] || offs[0] < 0 {
			return fmt.Errorf("string offset %d (%d) below offset %d (%d)", k, offs[k], k-1, offs[k-1])
		}
	}
	for i := range keep {
		keep[i] = keep[i] && p.str(a.Value(i))
	}
	return nil
}
