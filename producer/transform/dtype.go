package transform

import (
	"fmt"
	"math"

	"github.com/shmloader/shmloader/ring"
)

// parseDType returns the ring dtype named s.
func parseDType(s string) (ring.DType, error) {
	for d := ring.Bool; d <= ring.Float64; d++ {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q", s)
}

func isFloatDType(d ring.DType) bool {
	return d == ring.Float16 || d == ring.BFloat16 || d == ring.Float32 || d == ring.Float64
}

// intRange is the value range of an integer dtype, as float64 edges for saturation: a
// float at or beyond an edge converts to that limit.
func intRange(d ring.DType) (lo, hi float64) {
	switch d {
	case ring.Int8:
		return math.MinInt8, math.MaxInt8
	case ring.Uint8:
		return 0, math.MaxUint8
	case ring.Int16:
		return math.MinInt16, math.MaxInt16
	case ring.Uint16:
		return 0, math.MaxUint16
	case ring.Int32:
		return math.MinInt32, math.MaxInt32
	case ring.Uint32:
		return 0, math.MaxUint32
	case ring.Uint64:
		return 0, 1 << 64
	}
	return math.MinInt64, 1 << 63
}

// floatBits converts a float working value to d's bits (low d.Size() bytes).
func floatBits(d ring.DType, v float64) uint64 {
	switch d {
	case ring.Float64:
		if v != v {
			return nanF64
		}
		return math.Float64bits(v)
	case ring.Float32:
		f := float32(v)
		if f != f {
			return nanF32
		}
		return uint64(math.Float32bits(f))
	case ring.Float16:
		return uint64(toF16(v))
	case ring.BFloat16:
		return uint64(toBF16(v))
	case ring.Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	if v != v {
		return 0
	}
	lo, hi := intRange(d)
	switch {
	case v <= lo:
		return uint64(int64(lo))
	case d == ring.Uint64 && v >= hi:
		return math.MaxUint64
	case d == ring.Uint64:
		return uint64(v)
	case v >= hi:
		// hi is exact for every type but int64, whose 2^63 edge is one past the limit.
		if d == ring.Int64 {
			return math.MaxInt64
		}
		return uint64(int64(hi))
	}
	return uint64(int64(v))
}

// intBits converts an integer working value (uint64 when unsigned) to d's bits. Integer
// dtypes keep the low bytes, which wraps like numpy's astype.
func intBits(d ring.DType, v int64, unsigned bool) uint64 {
	switch d {
	case ring.Float64:
		if unsigned {
			return math.Float64bits(float64(uint64(v)))
		}
		return math.Float64bits(float64(v))
	case ring.Float32:
		if unsigned {
			return uint64(math.Float32bits(float32(uint64(v))))
		}
		return uint64(math.Float32bits(float32(v)))
	case ring.Float16:
		return uint64(toF16(intToOdd(v, unsigned)))
	case ring.BFloat16:
		return uint64(toBF16(intToOdd(v, unsigned)))
	case ring.Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	return uint64(v)
}

// floatValue is the float64 value of float dtype bits.
func floatValue(d ring.DType, b uint64) float64 {
	switch d {
	case ring.Float32:
		return float64(math.Float32frombits(uint32(b)))
	case ring.Float16:
		return fromF16(uint16(b))
	case ring.BFloat16:
		return fromBF16(uint16(b))
	}
	return math.Float64frombits(b)
}

// intValue is the working value of integer dtype bits: sign- or zero-extended, uint64
// kept as its bits.
func intValue(d ring.DType, b uint64) int64 {
	switch d {
	case ring.Int8:
		return int64(int8(b))
	case ring.Uint8, ring.Bool:
		return int64(uint8(b))
	case ring.Int16:
		return int64(int16(b))
	case ring.Uint16:
		return int64(uint16(b))
	case ring.Int32:
		return int64(int32(b))
	case ring.Uint32:
		return int64(uint32(b))
	}
	return int64(b)
}
