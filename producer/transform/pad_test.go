package transform

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// TestPad: truncation, padding, empty and null lists, null elements, and the order of
// steps around pad.
func TestPad(t *testing.T) {
	lt := arrow.ListOf(f32t)
	c := mk("l", lt, []any{[]any{1.0, 2.0, 3.0}, []any{}, nil}, []any{[]any{4.0, nil}, []any{5.0, 6.0, 7.0, 8.0, 9.0}})
	pad := config.Transform{Op: config.OpPad, Length: 3, PadValue: -1}
	out, dst := run(t, steps(pad), nil, c)
	ts := out.Tensors()
	if len(ts) != 2 || ts[1].Name != "out_len" || ts[0].Shape[0] != 3 || len(ts[1].Shape) != 0 {
		t.Fatalf("tensors %+v", ts)
	}
	testkit.SameFloats(t, "values", f32s(dst[0]), []float64{1, 2, 3, -1, -1, -1, -1, -1, -1, 4, nan, -1, 5, 6, 7})
	testkit.SameInts(t, "lens", ints32(dst[1]), []int64{3, 0, 0, 2, 3})

	_, dst = run(t, steps(pad), []int32{2, 3}, c)
	testkit.SameFloats(t, "sel values", f32s(dst[0]), []float64{-1, -1, -1, 4, nan, -1})
	testkit.SameInts(t, "sel lens", ints32(dst[1]), []int64{0, 2})

	// Before pad, steps touch elements only; after it, every position.
	norm := config.Transform{Op: config.OpNormalize, Mean: []float64{1}, Std: []float64{2}}
	_, dst = run(t, steps(fillNum(0), pad, norm), []int32{3}, c)
	testkit.SameFloats(t, "fill, pad, normalize", f32s(dst[0]), []float64{1.5, -0.5, -1})
	_, dst = run(t, steps(norm, pad), []int32{3}, c)
	testkit.SameFloats(t, "normalize, pad", f32s(dst[0]), []float64{1.5, nan, -1})

	// Large lists of ints stay ints; a pad value must then be an integer.
	ll := mk("l", arrow.LargeListOf(i64t), []any{[]any{1, 2}, nil, []any{3, 4, 5, 6}})
	pad2 := config.Transform{Op: config.OpPad, Length: 2, PadValue: 9}
	out, dst = run(t, steps(pad2), nil, ll)
	if out.Tensors()[0].DType.String() != "int64" {
		t.Fatalf("dtype %v", out.Tensors()[0].DType)
	}
	testkit.SameInts(t, "int values", testkit.Int64s(dst[0]), []int64{1, 2, 9, 9, 3, 4})
	testkit.SameInts(t, "int lens", ints32(dst[1]), []int64{2, 0, 2})
}

// TestSlicedChunks: chunks that are slices of larger arrays (non-zero offsets in values,
// validity bitmaps and list offsets), as readers may hand out.
func TestSlicedChunks(t *testing.T) {
	base := mk("x", f64t, []any{0.0, nil, 2.0, 3.0, nil, 5.0, 6.0, 7.0, 8.0, nil, 10.0, 11.0})
	whole := base.ch.Chunk(0)
	s1, s2 := array.NewSlice(whole, 1, 6), array.NewSlice(whole, 9, 12)
	c := col{base.f, arrow.NewChunked(f64t, []arrow.Array{s1, s2})}
	_, dst := run(t, steps(fillNum(-1)), nil, c)
	testkit.SameFloats(t, "floats", f32s(dst[0]), []float64{-1, 2, 3, -1, 5, -1, 10, 11})
	_, dst = run(t, steps(), []int32{0, 4, 5, 7}, c)
	testkit.SameFloats(t, "floats sel", f32s(dst[0]), []float64{nan, 5, nan, 11})

	b := mk("b", arrow.FixedWidthTypes.Boolean, []any{true, false, nil, true, true, false, false, true, true, nil, false})
	bc := col{b.f, arrow.NewChunked(b.f.Type, []arrow.Array{array.NewSlice(b.ch.Chunk(0), 7, 11)})}
	_, dst = run(t, steps(), nil, bc)
	testkit.SameInts(t, "bools", testkit.Int64s(dst[0]), []int64{1, 1, 0, 0})

	s := mk("s", arrow.BinaryTypes.String, []any{"a", "b", nil, "c"})
	sc := col{s.f, arrow.NewChunked(s.f.Type, []arrow.Array{array.NewSlice(s.ch.Chunk(0), 1, 4)})}
	hb := config.Transform{Op: config.OpHashBucket, Buckets: 1 << 40}
	_, dst = run(t, steps(hb), nil, sc)
	h := func(v string) int64 { return int64(fnvString(fnvSeed(0), v) % (1 << 40)) }
	testkit.SameInts(t, "strings", testkit.Int64s(dst[0]), []int64{h("b"), 0, h("c")})

	l := mk("l", arrow.ListOf(f32t), []any{[]any{1.0}, []any{2.0, nil}, nil, []any{3.0, 4.0, 5.0}, []any{}})
	lc := col{l.f, arrow.NewChunked(l.f.Type, []arrow.Array{array.NewSlice(l.ch.Chunk(0), 1, 5)})}
	_, dst = run(t, steps(config.Transform{Op: config.OpPad, Length: 2, PadValue: 9}), []int32{0, 2, 3}, lc)
	testkit.SameFloats(t, "lists", f32s(dst[0]), []float64{2, nan, 3, 4, 9, 9})
	testkit.SameInts(t, "list lens", ints32(dst[1]), []int64{2, 2, 0})

	h16 := mk("h", arrow.FixedWidthTypes.Float16, []any{1.5, nil, 65504.0, -0.25})
	hc := col{h16.f, arrow.NewChunked(h16.f.Type, []arrow.Array{array.NewSlice(h16.ch.Chunk(0), 1, 4)})}
	o := steps()
	o.DType = "float64"
	_, dst = run(t, o, nil, hc)
	testkit.SameFloats(t, "float16", testkit.F64s(dst[0]), []float64{nan, 65504, -0.25})
}
