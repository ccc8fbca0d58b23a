package filter

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
)

// class is how a column's values compare.
type class uint8

const (
	cOther  class = iota // no comparisons: is_null and not_null only
	cInt                 // integers and bools, as int64
	cUint                // uint64, as int64 keys with the top bit flipped (order kept)
	cFloat               // as float64
	cString              // bytewise
)

func classOf(t arrow.DataType) class {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.BOOL:
		return cInt
	case arrow.UINT64:
		return cUint
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return cFloat
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return cString
	}
	return cOther
}

// opCode is a predicate's operator, for switches in per-row loops.
type opCode uint8

const (
	opEq opCode = iota
	opNe
	opLt
	opLe
	opGt
	opGe
	opIn
	opNotIn
	opNull
	opNotNull
)

var opCodes = map[string]opCode{
	config.PredEq: opEq, config.PredNe: opNe, config.PredLt: opLt, config.PredLe: opLe,
	config.PredGt: opGt, config.PredGe: opGe, config.PredIn: opIn, config.PredNotIn: opNotIn,
	config.PredNull: opNull, config.PredNotNull: opNotNull,
}

// pred is one compiled predicate. An integer comparison is a range of keys [lo, hi]
// (empty when lo > hi), in and not_in a sorted set; negate turns "in the range or set"
// into "not in it" (!= and not_in).
type pred struct {
	col    string
	idx    int // position of col in Filter.cols
	op     string
	code   opCode
	class  class
	typ    arrow.DataType
	negate bool
	lo, hi int64     // integer comparisons
	keys   []int64   // integer in, not_in
	c      float64   // float comparisons
	floats []float64 // float in, not_in: sorted, no NaN
	s      string    // string comparisons
	strs   []string  // string in, not_in: sorted
}

// setOp reports whether p tests membership of a set.
func (p *pred) setOp() bool { return p.code == opIn || p.code == opNotIn }

// intRange turns "x op c" over the integer keys of class cl into [lo, hi] and negate.
// It is exact: x < 2.5 is x <= 2, x == 2.5 holds for no x, and bounds past the type's
// range leave all or nothing.
func intRange(op string, c float64, cl class) (lo, hi int64, negate bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	empty := func() (int64, int64, bool) { return 1, 0, negate }
	if op == config.PredNe {
		op, negate = config.PredEq, true
	}
	if c != c {
		return empty()
	}
	switch op {
	case config.PredEq:
		k, ok := key(c, cl)
		if !ok || c != math.Trunc(c) {
			return empty()
		}
		return k, k, negate
	case config.PredLt, config.PredGe:
		// x < c ⇔ x < ceil(c) ⇔ x <= ceil(c)-1; x >= c ⇔ x >= ceil(c).
		e := math.Ceil(c)
		k, ok := key(e, cl)
		below := !ok && e < 0
		switch {
		case op == config.PredLt && (below || ok && k == math.MinInt64):
			return empty()
		case op == config.PredLt && ok:
			return lo, k - 1, false
		case op == config.PredLt:
			return lo, hi, false
		case below:
			return lo, hi, false
		case ok:
			return k, hi, false
		}
		return empty()
	default: // <=, >
		// x <= c ⇔ x <= floor(c); x > c ⇔ x >= floor(c)+1.
		e := math.Floor(c)
		k, ok := key(e, cl)
		above := !ok && e > 0
		switch {
		case op == config.PredLe && ok:
			return lo, k, false
		case op == config.PredLe && above:
			return lo, hi, false
		case op == config.PredLe:
			return empty()
		case above || ok && k == math.MaxInt64:
			return empty()
		case ok:
			return k + 1, hi, false
		}
		return lo, hi, false
	}
}

// key is the int64 key of integral float e in class cl, ok false when e is outside the
// class's range (cInt: int64; cUint: uint64).
func key(e float64, cl class) (int64, bool) {
	if cl == cUint {
		if e < 0 || e >= 1<<64 {
			return 0, false
		}
		return uKey(uint64(e)), true
	}
	if e < -(1<<63) || e >= 1<<63 {
		return 0, false
	}
	return int64(e), true
}

// uKey maps uint64 to int64 keeping the order.
func uKey(u uint64) int64 { return int64(u ^ 1<<63) }

// intKeys are the sorted keys of the integral, in-range numbers of vals: the only ones
// an integer can equal.
func intKeys(vals []config.Scalar, cl class) []int64 {
	var ks []int64
	for _, v := range vals {
		if v.IsInt || v.IsUint {
			if k, ok, _ := exactKey(v, cl); ok {
				ks = append(ks, k)
			}
		} else if k, ok := key(v.Num, cl); ok && v.Num == math.Trunc(v.Num) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

// inKeys reports whether k is in sorted ks.
func inKeys(ks []int64, k int64) bool {
	_, found := slices.BinarySearch(ks, k)
	return found
}

// inFloats reports whether x equals one of sorted fs (no NaN in fs; -0 equals 0).
func inFloats(fs []float64, x float64) bool {
	i, _ := slices.BinarySearchFunc(fs, x, func(a, b float64) int {
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	return i < len(fs) && fs[i] == x
}
