package transform

import (
	"math"
	"math/bits"
	"strconv"
)

// A decimal's unscaled value is a two's complement integer held here as 1 to 4
// little-endian 64-bit words (decimal256 takes 4); its value is unscaled × 10^-scale.

// pow10f are the powers of ten a float64 holds exactly.
var pow10f = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// pow10i are the powers of ten an int64 holds.
var pow10i = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// put stores the decimal w at position at of the block, as the column is read.
func (d *decInfo) put(wk *work, at int, w []uint64) {
	if d.asInt {
		wk.i[at] = decInt(w, d.shift)
	} else {
		wk.f[at] = decFloat(w, d.scale)
	}
}

// putInt64 is put for an unscaled value that is an int64 (decimal32 and decimal64,
// INT32 and INT64 pages).
func (d *decInfo) putInt64(wk *work, at int, v int64) {
	if d.asInt {
		wk.i[at] = scaleInt(v, d.shift)
	} else {
		wk.f[at] = decFloat64(v, d.scale)
	}
}

// fitsInt64 returns w as an int64 when every word above the first only extends its sign.
func fitsInt64(w []uint64) (int64, bool) {
	v := int64(w[0])
	ext := uint64(v >> 63)
	for _, x := range w[1:] {
		if x != ext {
			return 0, false
		}
	}
	return v, true
}

// pow5 are the powers of five a uint64 holds.
var pow5 = func() (p [28]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 5
	}
	return p
}()

// decFloat is the float64 nearest to w × 10^-scale, ties to even: what Python's
// float(Decimal) gives.
func decFloat(w []uint64, scale int32) float64 {
	if v, ok := fitsInt64(w); ok {
		return decFloat64(v, scale)
	}
	if scale >= 0 && scale < int32(len(pow5)) {
		if hi, ok := fitsInt64(w[1:]); ok {
			lo := w[0]
			neg := hi < 0
			if neg {
				lo, hi = -lo, ^hi
				if lo == 0 {
					hi++
				}
			}
			return signed(divRound(uint64(hi), lo, int(scale)), neg)
		}
	}
	return decFloatSlow(w, scale)
}

// decFloat64 is decFloat of an int64. When v and 10^scale are both exact float64s, one
// division (or product) rounds once, so it is correctly rounded (Clinger's fast path).
func decFloat64(v int64, scale int32) float64 {
	switch {
	case v >= -1<<53 && v <= 1<<53 && scale >= 0 && scale < int32(len(pow10f)):
		return float64(v) / pow10f[scale]
	case v >= -1<<53 && v <= 1<<53 && scale < 0 && -scale < int32(len(pow10f)):
		return float64(v) * pow10f[-scale]
	case scale >= 0 && scale < int32(len(pow5)):
		mag := uint64(v)
		if v < 0 {
			mag = -mag
		}
		return signed(divRound(0, mag, int(scale)), v < 0)
	}
	w := [1]uint64{uint64(v)}
	return decFloatSlow(w[:], scale)
}

func signed(f float64, neg bool) float64 {
	if neg {
		return -f
	}
	return f
}

// divRound is the float64 nearest to (hi·2^64 + lo) / 10^scale, ties to even, for
// 0 <= scale < len(pow5). 10^scale is 5^scale·2^scale, and the 2^scale is exact in the
// exponent; the integer division by 5^scale is scaled to give a 63- or 64-bit quotient
// and a remainder, which round once to 53 bits.
func divRound(hi, lo uint64, scale int) float64 {
	if hi == 0 && lo == 0 {
		return 0
	}
	d := pow5[scale]
	bv := bits.Len64(lo)
	if hi != 0 {
		bv = 64 + bits.Len64(hi)
	}
	// n = v·2^k has 63 + len(d) bits, so n / d lies in (2^62, 2^64).
	k := 63 - bv + bits.Len64(d)
	sticky := false
	switch {
	case k >= 64:
		hi, lo = lo<<(k-64), 0
	case k > 0:
		hi, lo = hi<<k|lo>>(64-k), lo<<k
	case k < 0 && -k < 64:
		sticky = lo<<(64+k) != 0
		hi, lo = hi>>-k, lo>>-k|hi<<(64+k)
	case k < 0:
		sticky = lo != 0 || hi<<(128+k) != 0
		hi, lo = 0, hi>>(-k-64)
	}
	q, r := bits.Div64(hi, lo, d)
	sticky = sticky || r != 0
	drop := bits.Len64(q) - 53 // 10 or 11
	m := q >> drop
	rest, half := q&(1<<drop-1), uint64(1)<<(drop-1)
	if rest > half || rest == half && (sticky || m&1 == 1) {
		m++
		if m == 1<<53 {
			m, drop = m>>1, drop+1
		}
	}
	// m·2^(drop-k-scale), m in [2^52, 2^53): far from subnormals and overflow.
	exp := drop - k - scale + 52 + 1023
	return math.Float64frombits(uint64(exp)<<52 | m&(1<<52-1))
}

func decFloatSlow(w []uint64, scale int32) float64 {
	var mag [4]uint64
	n := copy(mag[:], w)
	var buf [100]byte // 78 digits at most, a sign, "e" and the exponent
	b := buf[:0]
	if int64(w[len(w)-1]) < 0 {
		b = append(b, '-')
		negate(mag[:n])
	}
	b = appendDigits(b, mag[:n])
	b = append(b, 'e')
	b = strconv.AppendInt(b, -int64(scale), 10)
	// A syntax error cannot happen; out of range gives ±Inf or ±0, as Python does.
	f, _ := strconv.ParseFloat(unsafeString(b), 64) // b is not changed while it is parsed
	return f
}

// negate turns the two's complement w into its magnitude, in place.
func negate(w []uint64) {
	carry := uint64(1)
	for i := range w {
		w[i], carry = bits.Add64(^w[i], 0, carry)
	}
}

// appendDigits appends the decimal digits of the unsigned integer mag (changed).
func appendDigits(b []byte, mag []uint64) []byte {
	const chunk = 1e19
	var low [5]uint64 // 19 digits each, least significant first: 2^256 < 10^78
	n := 0
	for {
		top := len(mag)
		for top > 1 && mag[top-1] == 0 {
			top--
		}
		mag = mag[:top]
		if top == 1 {
			break
		}
		var rem uint64
		for i := top - 1; i >= 0; i-- {
			mag[i], rem = bits.Div64(rem, mag[i], chunk)
		}
		low[n] = rem
		n++
	}
	b = strconv.AppendUint(b, mag[0], 10)
	for i := n - 1; i >= 0; i-- {
		var d [19]byte
		x := low[i]
		for j := 18; j >= 0; j-- {
			d[j] = byte('0' + x%10)
			x /= 10
		}
		b = append(b, d[:]...)
	}
	return b
}

// decInt is w × 10^shift (shift >= 0), saturating at the int64 limits.
func decInt(w []uint64, shift int32) int64 {
	v, ok := fitsInt64(w)
	if !ok {
		if int64(w[len(w)-1]) < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return scaleInt(v, shift)
}

// scaleInt is v × 10^shift (shift >= 0), saturating at the int64 limits.
func scaleInt(v int64, shift int32) int64 {
	switch {
	case v == 0 || shift == 0:
		return v
	case shift >= int32(len(pow10i)) && v > 0:
		return math.MaxInt64
	case shift >= int32(len(pow10i)):
		return math.MinInt64
	}
	return satMul(v, pow10i[shift])
}

// satMul is v × m (m > 0), saturating at the int64 limits.
func satMul(v, m int64) int64 {
	switch {
	case v > math.MaxInt64/m:
		return math.MaxInt64
	case v < math.MinInt64/m:
		return math.MinInt64
	}
	return v * m
}

// beWords reads a big-endian two's complement integer of 1 to 32 bytes (a Parquet
// FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY decimal) into 4 sign-extended words.
func beWords(b []byte, w *[4]uint64) []uint64 {
	ext := uint64(0)
	if int8(b[0]) < 0 {
		ext = math.MaxUint64
	}
	for i := range w {
		end := len(b) - 8*i
		if end <= 0 {
			w[i] = ext
			continue
		}
		start := max(end-8, 0)
		v := ext
		for _, c := range b[start:end] {
			v = v<<8 | uint64(c)
		}
		w[i] = v
	}
	return w[:]
}
