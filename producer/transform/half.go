package transform

import (
	"math"
	"math/bits"
)

// Half formats: float16 (IEEE binary16) and bfloat16 (the top half of a float32).
const (
	f16Exp, f16Man   = 5, 10
	bf16Exp, bf16Man = 8, 7
	nanF16           = 0x7e00
	nanBF16          = 0x7fc0
	nanF32           = 0x7fc00000
	nanF64           = 0x7ff8000000000000
)

// narrow rounds x to nearest even in a binary format of expBits exponent and manBits
// mantissa bits, subnormals included, and returns its bits. It rounds once from the
// float64, never through float32, which would round twice.
func narrow(x float64, expBits, manBits uint) uint16 {
	b := math.Float64bits(x)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	man := b & (1<<52 - 1)
	inf := uint64(1<<expBits-1) << manBits
	switch {
	case exp == 0x7ff && man != 0:
		return uint16(inf | 1<<(manBits-1))
	case exp == 0x7ff:
		return sign | uint16(inf)
	case exp == 0:
		// Zero, or a float64 subnormal: far below half the smallest target subnormal.
		return sign
	}
	bias := 1<<(expBits-1) - 1
	e := exp - 1023
	emin := 1 - bias
	sig := man | 1<<52
	shift := 52 - int(manBits)
	if e < emin {
		shift += emin - e
	}
	if shift > 53 {
		// sig < 2^53 is below half of the unit in the last place: rounds to zero.
		return sign
	}
	r := sig >> shift
	rem := sig & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || rem == half && r&1 == 1 {
		r++
	}
	// A subnormal's bits are r itself; r == 1<<manBits is then the smallest normal.
	// A normal's r carries the implicit bit, which adds one to the exponent field, and a
	// carry out of the mantissa moves the exponent up as it should.
	out := r
	if e >= emin {
		out = uint64(e+bias-1)<<manBits + r
	}
	if out >= inf {
		return sign | uint16(inf)
	}
	return sign | uint16(out)
}

// widen is the exact float64 value of half-format bits h.
func widen(h uint16, expBits, manBits uint) float64 {
	exp := int(h>>manBits) & (1<<expBits - 1)
	man := uint64(h) & (1<<manBits - 1)
	bias := 1<<(expBits-1) - 1
	var v float64
	switch {
	case exp == 1<<expBits-1 && man != 0:
		return math.NaN()
	case exp == 1<<expBits-1:
		v = math.Inf(1)
	case exp == 0:
		v = math.Ldexp(float64(man), 1-bias-int(manBits))
	default:
		v = math.Ldexp(float64(man|1<<manBits), exp-bias-int(manBits))
	}
	if h&0x8000 != 0 {
		v = math.Copysign(v, -1)
	}
	return v
}

func toF16(x float64) uint16   { return narrow(x, f16Exp, f16Man) }
func toBF16(x float64) uint16  { return narrow(x, bf16Exp, bf16Man) }
func fromF16(h uint16) float64 { return widen(h, f16Exp, f16Man) }
func fromBF16(h uint16) float64 {
	return float64(math.Float32frombits(uint32(h) << 16))
}

// oddFloat converts an integer magnitude to float64 rounding to odd: exact below 2^53,
// else truncated with the lowest kept bit set when bits were lost. Rounding that once
// more to a format of at most 51 bits gives the correctly rounded result, which a plain
// float64 conversion (round to nearest) followed by a second rounding does not.
func oddFloat(u uint64) float64 {
	if u < 1<<53 {
		return float64(u)
	}
	sh := bits.Len64(u) - 53
	m := u >> sh
	if u&(1<<sh-1) != 0 {
		m |= 1
	}
	return math.Ldexp(float64(m), sh)
}

// intToOdd is oddFloat for a signed or unsigned working integer.
func intToOdd(v int64, unsigned bool) float64 {
	if unsigned || v >= 0 {
		return oddFloat(uint64(v))
	}
	return -oddFloat(-uint64(v))
}
