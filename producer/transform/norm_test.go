package transform

import (
	"math"
	"math/rand/v2"
	"testing"
)

// subDiv's vector path gives the bits of the scalar loop for every length (tails
// included) and for NaN, ±Inf, ±0, subnormals and huge values, and for means and stds
// of every sign and size.
func TestSubDivMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 5e-324,
		-5e-324, 2.2250738585072014e-308, math.MaxFloat64, -math.MaxFloat64, 1, -1, 0.1, 3}
	params := [][2]float64{{0, 1}, {0.25, 1.5}, {-3, 7e-300}, {1e300, 1e-10}, {0, 3}, {math.Inf(1), 2}, {5, math.MaxFloat64}}
	for n := range 40 {
		for _, p := range params {
			x := make([]float64, n)
			for i := range x {
				if rng.IntN(3) == 0 {
					x[i] = specials[rng.IntN(len(specials))]
				} else {
					x[i] = math.Float64frombits(rng.Uint64())
				}
			}
			want := append([]float64(nil), x...)
			subDivGo(want, p[0], p[1])
			subDiv(x, p[0], p[1])
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(want[i]) && !(math.IsNaN(x[i]) && math.IsNaN(want[i])) {
					t.Fatalf("n=%d mean=%g std=%g: x[%d] = %x, want %x", n, p[0], p[1], i, math.Float64bits(x[i]), math.Float64bits(want[i]))
				}
			}
		}
	}
}

func BenchmarkSubDiv(b *testing.B) {
	x := make([]float64, blockValues)
	for i := range x {
		x[i] = float64(i) * 0.37
	}
	b.Run("vector", func(b *testing.B) {
		for range b.N {
			subDiv(x, 0.25, 1.5)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
	})
	b.Run("scalar", func(b *testing.B) {
		for range b.N {
			subDivGo(x, 0.25, 1.5)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
	})
}
