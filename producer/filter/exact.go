package filter

import (
	"math"

	"github.com/shmloader/shmloader/producer/config"
)

// exactKey is the key of integer literal v in class cl; ok is false when v is outside
// the class's range, below then saying on which side.
func exactKey(v config.Scalar, cl class) (k int64, ok, below bool) {
	switch {
	case cl == cUint && v.IsUint:
		return uKey(v.Uint), true, false
	case cl == cUint && v.Int < 0:
		return 0, false, true
	case cl == cUint:
		return uKey(uint64(v.Int)), true, false
	case v.IsUint:
		return 0, false, false // above every int64
	}
	return v.Int, true, false
}

// intRangeExact is intRange for an integer literal: exact whatever its size.
func intRangeExact(op string, v config.Scalar, cl class) (lo, hi int64, negate bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	if op == config.PredNe {
		op, negate = config.PredEq, true
	}
	k, ok, below := exactKey(v, cl)
	if !ok { // every value of the column is above (below) the literal, or the reverse
		greater := below
		switch {
		case op == config.PredEq,
			greater && (op == config.PredLt || op == config.PredLe),
			!greater && (op == config.PredGt || op == config.PredGe):
			return 1, 0, negate
		}
		return lo, hi, negate
	}
	switch op {
	case config.PredEq:
		return k, k, negate
	case config.PredLt:
		if k == math.MinInt64 {
			return 1, 0, negate
		}
		return lo, k - 1, negate
	case config.PredLe:
		return lo, k, negate
	case config.PredGt:
		if k == math.MaxInt64 {
			return 1, 0, negate
		}
		return k + 1, hi, negate
	}
	return k, hi, negate // >=
}
