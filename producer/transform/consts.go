package transform

import (
	"fmt"
	"math"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

// exactConst is intConst for a config literal, exact when it was written as an integer
// (float64 holds integers only up to 2^53).
func exactConst(s config.Scalar, k kind) (int64, error) {
	switch {
	case s.IsUint && k == kUint:
		return int64(s.Uint), nil
	case s.IsUint:
		return 0, fmt.Errorf("%d is outside the int64 range", s.Uint)
	case s.IsInt && k == kUint && s.Int < 0:
		return 0, fmt.Errorf("%d is outside the uint64 range", s.Int)
	case s.IsInt:
		return s.Int, nil
	}
	return intConst(s.Num, k)
}

func intConst(v float64, k kind) (int64, error) {
	switch {
	case v != math.Trunc(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("%g is not an integer but the values are %s (cast to a float first)", v, k)
	case k == kUint && (v < 0 || v >= 1<<64):
		return 0, fmt.Errorf("%g is outside the uint64 range", v)
	case k == kUint:
		return int64(uint64(v)), nil
	case v < -(1<<63) || v >= 1<<63:
		return 0, fmt.Errorf("%g is outside the int64 range", v)
	}
	return int64(v), nil
}

// clipBound is an integer bound in kind k's representation (uint64 bits for kUint),
// saturated to k's range: beyond it, it clips nothing on that side.
func clipBound(s config.Scalar, k kind) int64 {
	switch {
	case k == kUint && s.IsUint:
		return int64(s.Uint)
	case k == kUint && s.IsInt && s.Int < 0:
		return 0
	case k == kUint && s.IsInt:
		return s.Int
	case k == kUint:
		return int64(floatBits(ring.Uint64, s.Num))
	case s.IsUint:
		return math.MaxInt64
	case s.IsInt:
		return s.Int
	}
	return int64(floatBits(ring.Int64, s.Num))
}

// orFloat is s if the config recorded the literal, else the float64 value v (configs
// built in code).
func orFloat(s config.Scalar, v float64) config.Scalar {
	if s.IsInt || s.IsUint {
		return s
	}
	return config.Scalar{Num: v}
}
