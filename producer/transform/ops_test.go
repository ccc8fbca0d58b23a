package transform

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

var (
	f64t = arrow.PrimitiveTypes.Float64
	f32t = arrow.PrimitiveTypes.Float32
	i64t = arrow.PrimitiveTypes.Int64
	i32t = arrow.PrimitiveTypes.Int32
)

func cast(d string) config.Transform { return config.Transform{Op: config.OpCast, DType: d} }
func fillNum(v float64) config.Transform {
	return config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Num: v}}
}

func TestCastFloatToInt(t *testing.T) {
	c := mk("x", f64t, []any{1.7, -1.7, nan, inf, ninf, 1e300, -0.5, 127.9, -128.9, nil})
	_, dst := run(t, steps(cast("int8")), nil, c)
	got := make([]int64, len(dst[0]))
	for i, b := range dst[0] {
		got[i] = int64(int8(b))
	}
	testkit.SameInts(t, "int8", got, []int64{1, -1, 0, 127, -128, 127, 0, 127, -128, 0})

	_, dst = run(t, steps(cast("int64")), nil, c)
	testkit.SameInts(t, "int64", testkit.Int64s(dst[0]), []int64{1, -1, 0, math.MaxInt64, math.MinInt64, math.MaxInt64, 0, 127, -128, 0})

	o := steps(cast("uint64"))
	_, dst = run(t, o, nil, mk("x", f64t, []any{-3.0, 1.8446744073709552e19, 1e19, 2.5}))
	testkit.SameInts(t, "uint64", testkit.Int64s(dst[0]), []int64{0, -1, int64(-8446744073709551616), 2})
}

func TestCastIntWraps(t *testing.T) {
	c := mk("x", i64t, []any{300, -1, 127, -129, nil, 65536 + 7})
	_, dst := run(t, steps(cast("int8")), nil, c)
	got := make([]int64, len(dst[0]))
	for i, b := range dst[0] {
		got[i] = int64(int8(b))
	}
	testkit.SameInts(t, "int8", got, []int64{44, -1, 127, 127, 0, 7})
	_, dst = run(t, steps(cast("uint8")), nil, c)
	got = got[:0]
	for _, b := range dst[0] {
		got = append(got, int64(b))
	}
	testkit.SameInts(t, "uint8", got, []int64{44, 255, 127, 127, 0, 7})
	// The wrap happens at the cast: later steps see int8 values.
	o := steps(cast("int8"), cast("int64"), fillNum(9))
	_, dst = run(t, o, nil, c)
	testkit.SameInts(t, "int8 then int64", testkit.Int64s(dst[0]), []int64{44, -1, 127, 127, 9, 7})
}

func TestCastFloatRounding(t *testing.T) {
	o := steps(cast("float32"))
	o.DType = "float64"
	_, dst := run(t, o, nil, mk("x", f64t, []any{0.1, nil}))
	testkit.SameFloats(t, "float32 then float64", testkit.F64s(dst[0]), []float64{float64(float32(0.1)), nan})

	_, dst = run(t, steps(cast("float32")), nil, mk("x", i64t, []any{16777217, 16777219, -16777217}))
	testkit.SameFloats(t, "int to float32", f32s(dst[0]), []float64{16777216, 16777220, -16777216})

	o = steps(cast("bfloat16"), cast("float64"))
	_, dst = run(t, o, nil, mk("x", i64t, []any{1<<24 + 1<<16 + 1}))
	testkit.SameFloats(t, "int to bfloat16", testkit.F64s(dst[0]), []float64{1<<24 + 1<<17})

	_, dst = run(t, steps(cast("float16")), nil, mk("x", f64t, []any{1.0, 65520.0, nil}))
	testkit.SameInts(t, "float16 bits", []int64{int64(dst[0][0]) | int64(dst[0][1])<<8, int64(dst[0][2]) | int64(dst[0][3])<<8,
		int64(dst[0][4]) | int64(dst[0][5])<<8}, []int64{0x3c00, 0x7c00, nanF16})
}

func TestCastBoolAndUint64(t *testing.T) {
	_, dst := run(t, steps(cast("bool")), nil, mk("x", f64t, []any{0.0, math.Copysign(0, -1), nan, 2.5, nil}))
	testkit.SameInts(t, "bool", []int64{int64(dst[0][0]), int64(dst[0][1]), int64(dst[0][2]), int64(dst[0][3]), int64(dst[0][4])},
		[]int64{0, 0, 1, 1, 0})

	b := mk("b", arrow.FixedWidthTypes.Boolean, []any{true, false, nil})
	_, dst = run(t, steps(), nil, b)
	testkit.SameInts(t, "bool source", testkit.Int64s(dst[0]), []int64{1, 0, 0})

	u := mk("u", arrow.PrimitiveTypes.Uint64, []any{uint64(1<<64 - 1), 5})
	_, dst = run(t, steps(), nil, u)
	testkit.SameInts(t, "uint64 default int64", testkit.Int64s(dst[0]), []int64{-1, 5})
	o := steps(cast("float64"))
	_, dst = run(t, o, nil, u)
	testkit.SameFloats(t, "uint64 to float64", testkit.F64s(dst[0]), []float64{1 << 64, 5})
	o = steps(config.Transform{Op: config.OpClip, Max: fp(10)})
	o.DType = "uint64"
	_, dst = run(t, o, nil, u)
	testkit.SameInts(t, "uint64 clip", testkit.Int64s(dst[0]), []int64{10, 5})
}

func TestFillNull(t *testing.T) {
	_, dst := run(t, steps(fillNum(7)), nil, mk("x", f64t, []any{1.0, nil, nan, nil}))
	testkit.SameFloats(t, "float", f32s(dst[0]), []float64{1, 7, nan, 7})
	_, dst = run(t, steps(fillNum(-2)), nil, mk("x", i32t, []any{nil, 3}))
	testkit.SameInts(t, "int", testkit.Int64s(dst[0]), []int64{-2, 3})
	_, dst = run(t, steps(fillNum(nan)), nil, mk("x", f32t, []any{nil, 3.0}))
	testkit.SameFloats(t, "NaN fill", f32s(dst[0]), []float64{nan, 3})
	_, dst = run(t, steps(), nil, mk("x", f32t, []any{nil, 3.0}))
	testkit.SameFloats(t, "no fill", f32s(dst[0]), []float64{nan, 3})
	_, dst = run(t, steps(), nil, mk("x", i32t, []any{nil, 3}))
	testkit.SameInts(t, "no fill int", testkit.Int64s(dst[0]), []int64{0, 3})
}

func TestNormalize(t *testing.T) {
	norm := config.Transform{Op: config.OpNormalize, Mean: []float64{1, -2}, Std: []float64{2, 0.5}}
	a := mk("a", f64t, []any{3.0, nil, nan, inf})
	b := mk("b", i64t, []any{0, 1, nil, 5})
	_, dst := run(t, steps(norm), nil, a, b)
	want := []float64{(3.0 - 1) / 2, (0 + 2) / 0.5, nan, (1 + 2) / 0.5, nan, nan, inf, (5 + 2) / 0.5}
	for i := range want {
		want[i] = float64(float32(want[i]))
	}
	testkit.SameFloats(t, "stacked", f32s(dst[0]), want)
	one := config.Transform{Op: config.OpNormalize, Mean: []float64{0.1}, Std: []float64{3}}
	o := steps(one)
	o.DType = "float64"
	_, dst = run(t, o, nil, mk("x", f64t, []any{1.0, -7.25}))
	// Variables, so that Go computes in float64 at run time, not exactly at compile time.
	x, m, s := []float64{1.0, -7.25}, 0.1, 3.0
	testkit.SameFloats(t, "scalar", testkit.F64s(dst[0]), []float64{(x[0] - m) / s, (x[1] - m) / s})
}

func TestClip(t *testing.T) {
	clip := config.Transform{Op: config.OpClip, Min: fp(-1), Max: fp(1)}
	_, dst := run(t, steps(clip), nil, mk("x", f64t, []any{-5.0, 0.5, 5.0, nan, ninf, inf, nil}))
	testkit.SameFloats(t, "float", f32s(dst[0]), []float64{-1, 0.5, 1, nan, -1, 1, nan})
	low := config.Transform{Op: config.OpClip, Min: fp(0)}
	_, dst = run(t, steps(low), nil, mk("x", f64t, []any{-5.0, 5.0}))
	testkit.SameFloats(t, "min only", f32s(dst[0]), []float64{0, 5})
	ints := config.Transform{Op: config.OpClip, Min: fp(0), Max: fp(5)}
	_, dst = run(t, steps(ints), nil, mk("x", i64t, []any{-5, 3, 10, nil}))
	testkit.SameInts(t, "int", testkit.Int64s(dst[0]), []int64{0, 3, 5, 0})
	wide := config.Transform{Op: config.OpClip, Min: fp(-1e30), Max: fp(inf)}
	_, dst = run(t, steps(wide), nil, mk("x", i64t, []any{math.MinInt64, math.MaxInt64}))
	testkit.SameInts(t, "int saturated bounds", testkit.Int64s(dst[0]), []int64{math.MinInt64, math.MaxInt64})
}

func TestLog1p(t *testing.T) {
	o := steps(config.Transform{Op: config.OpLog1p})
	o.DType = "float64"
	_, dst := run(t, o, nil, mk("x", f64t, []any{0.0, -1.0, -2.0, 1.0, nan, inf, ninf, nil}))
	testkit.SameFloats(t, "float", testkit.F64s(dst[0]), []float64{0, ninf, nan, math.Ln2, nan, inf, nan, nan})
	_, dst = run(t, o, nil, mk("x", i64t, []any{1, nil}))
	testkit.SameFloats(t, "int", testkit.F64s(dst[0]), []float64{math.Ln2, nan})
}

func TestBucketize(t *testing.T) {
	bk := config.Transform{Op: config.OpBucketize, Boundaries: []float64{0, 1, 2.5}}
	_, dst := run(t, steps(bk), nil, mk("x", f64t, []any{-1.0, 0.0, 0.5, 1.0, 2.5, 100.0, nan, ninf, inf, nil}))
	testkit.SameInts(t, "float", testkit.Int64s(dst[0]), []int64{0, 1, 1, 2, 3, 3, 3, 0, 3, 0})
	_, dst = run(t, steps(bk), nil, mk("x", i32t, []any{0, 1, 2, 3, -7}))
	testkit.SameInts(t, "int", testkit.Int64s(dst[0]), []int64{1, 2, 2, 3, 0})
	o := steps(bk, fillNum(-1))
	o.DType = "int32"
	_, dst = run(t, o, nil, mk("x", f64t, []any{nil, 0.7}))
	testkit.SameInts(t, "filled after", ints32(dst[0]), []int64{-1, 1})
}
