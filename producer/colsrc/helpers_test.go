package colsrc

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/transform"
)

// blockValues is the transforms' block (transform.blockValues): a page longer than it
// is cut into runs inside the page.
const blockValues = 512

// arrayOf makes an array of type t of vals (testkit.Append's values).
func arrayOf(t arrow.DataType, vals []any) arrow.Array { return testkit.Array(t, vals) }

// rowBytes is the size of one row of tensor i of out.
func rowBytes(out *transform.Output, i int) int {
	t := out.Tensors()[i]
	n := t.DType.Size()
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

func cast(d string) config.Transform { return config.Transform{Op: config.OpCast, DType: d} }

func fillNum(v float64) config.Transform {
	return config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Num: v}}
}

func dt(part, tz string) config.Transform {
	return config.Transform{Op: config.OpDatetime, Part: part, TZ: tz}
}

func fp(v float64) *float64 { return &v }

var nan = math.NaN()

func floorMod(a, b int64) int64 { return (a%b + b) % b }

// exactFloat is the float64 nearest to v × 10^-scale, by exact rational arithmetic.
func exactFloat(v *big.Int, scale int32) float64 {
	r := new(big.Rat).SetInt(v)
	r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	f, _ := r.Float64()
	return f
}

// randDigits is an integer of 1 to n random decimal digits, of either sign.
func randDigits(rng *rand.Rand, n int) *big.Int {
	v := new(big.Int)
	for range rng.IntN(n) + 1 {
		v.Mul(v, big.NewInt(10)).Add(v, big.NewInt(rng.Int64N(10)))
	}
	if rng.IntN(2) == 0 {
		v.Neg(v)
	}
	return v
}
