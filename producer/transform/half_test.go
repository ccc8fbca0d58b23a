package transform

import (
	"math"
	"math/big"
	"testing"

	"github.com/shmloader/shmloader/ring"
)

type halfFormat struct {
	name string
	to   func(float64) uint16
	from func(uint16) float64
	nan  uint16
}

var halves = []halfFormat{{"float16", toF16, fromF16, nanF16}, {"bfloat16", toBF16, fromBF16, nanBF16}}

// TestHalfRoundTrip: every non-NaN pattern converts back to itself.
func TestHalfRoundTrip(t *testing.T) {
	for _, h := range halves {
		for b := range 1 << 16 {
			v := h.from(uint16(b))
			if v != v {
				if got := h.to(v); got != h.nan {
					t.Fatalf("%s: NaN %#04x -> %#04x, want canonical %#04x", h.name, b, got, h.nan)
				}
				continue
			}
			if got := h.to(v); got != uint16(b) {
				t.Fatalf("%s: %#04x (%g) -> %#04x", h.name, b, v, got)
			}
		}
	}
}

// TestHalfMidpoints: halfway between neighbours goes to the even one, a hair either side
// to the nearer one. The midpoint is exact in float64 (at most 12 significant bits).
func TestHalfMidpoints(t *testing.T) {
	for _, h := range halves {
		for b := range 0x7fff {
			lo, hi := h.from(uint16(b)), h.from(uint16(b+1))
			if math.IsNaN(hi) || math.IsNaN(lo) {
				continue
			}
			if math.IsInf(hi, 1) {
				// The overflow threshold: max + half an ulp, which the even rule sends up.
				hi = lo + (lo - h.from(uint16(b-1)))
			}
			mid := (lo + hi) / 2
			even := uint16(b)
			if b&1 == 1 {
				even = uint16(b + 1)
			}
			for _, sign := range []float64{1, -1} {
				s := uint16(0)
				if sign < 0 {
					s = 0x8000
				}
				if got := h.to(sign * mid); got != even|s {
					t.Fatalf("%s: midpoint %g of %#04x/%#04x -> %#04x, want %#04x", h.name, sign*mid, b, b+1, got, even|s)
				}
				if got := h.to(sign * math.Nextafter(mid, 0)); got != uint16(b)|s {
					t.Fatalf("%s: just below %g -> %#04x, want %#04x", h.name, sign*mid, got, b)
				}
				if got := h.to(sign * math.Nextafter(mid, math.Inf(1))); got != uint16(b+1)|s {
					t.Fatalf("%s: just above %g -> %#04x, want %#04x", h.name, sign*mid, got, b+1)
				}
			}
		}
	}
}

// TestBF16MatchesFloat32Trick checks bfloat16 against the well-known rounding of float32
// bits ((b + 0x7fff + lsb) >> 16), which is exact for float32 inputs.
func TestBF16MatchesFloat32Trick(t *testing.T) {
	for i := uint32(0); i < 1<<32-1<<20; i += 0x10001 {
		f := math.Float32frombits(i)
		if f != f {
			continue
		}
		want := uint16((i + 0x7fff + (i>>16)&1) >> 16)
		if got := toBF16(float64(f)); got != want {
			t.Fatalf("bf16(%g = %#08x) = %#04x, want %#04x", f, i, got, want)
		}
	}
}

func TestHalfSpecials(t *testing.T) {
	cases := []struct {
		v        float64
		f16, b16 uint16
	}{
		{0, 0, 0}, {math.Copysign(0, -1), 0x8000, 0x8000}, {1, 0x3c00, 0x3f80}, {-2, 0xc000, 0xc000},
		{65504, 0x7bff, 0x4780}, {65520, 0x7c00, 0x4780}, {1e300, 0x7c00, 0x7f80}, {-1e300, 0xfc00, 0xff80},
		{inf, 0x7c00, 0x7f80}, {ninf, 0xfc00, 0xff80}, {nan, nanF16, nanBF16}, {-nan, nanF16, nanBF16},
		{5.960464477539063e-08, 0x0001, 0x3380}, {2.9802322387695312e-08, 0, 0x3300}, {3e-08, 1, 0x3301},
		{1e-320, 0, 0}, {0.1, 0x2e66, 0x3dcd},
	}
	for _, c := range cases {
		if got := toF16(c.v); got != c.f16 {
			t.Errorf("float16(%g) = %#04x, want %#04x", c.v, got, c.f16)
		}
		if got := toBF16(c.v); got != c.b16 {
			t.Errorf("bfloat16(%g) = %#04x, want %#04x", c.v, got, c.b16)
		}
	}
}

// TestIntToHalfRoundsOnce: int64 → float16/bfloat16 rounds once, like big.Float at the
// format's precision (ints are never subnormal; past the largest finite value is Inf).
func TestIntToHalfRoundsOnce(t *testing.T) {
	cases := []int64{1<<24 + 1<<16 + 1, 1<<60 + 1<<52 + 1, -(1<<60 + 1<<52 + 1), 1<<62 + 1<<54 - 1,
		math.MaxInt64, math.MinInt64, 65519, 65520, -65520, 2049, 2051, 3, 0}
	formats := []struct {
		h    halfFormat
		dt   ring.DType
		prec uint
		max  float64
	}{{halves[0], ring.Float16, 11, 65504}, {halves[1], ring.BFloat16, 8, math.MaxFloat32}}
	for _, v := range cases {
		for _, f := range formats {
			r := new(big.Float).SetPrec(f.prec).SetMode(big.ToNearestEven).SetInt64(v)
			want, _ := r.Float64()
			if math.Abs(want) > f.max {
				want = math.Copysign(inf, want)
			}
			if got := f.h.from(uint16(intBits(f.dt, v, false))); got != want {
				t.Errorf("%s(%d) = %g, want %g", f.h.name, v, got, want)
			}
		}
	}
	// uint64 beyond int64: 2^64-1 is 2^64 in bfloat16.
	if got := fromBF16(uint16(intBits(ring.BFloat16, -1, true))); got != 1<<64 {
		t.Errorf("bfloat16(2^64-1) = %g", got)
	}
}
