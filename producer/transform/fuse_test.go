package transform

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shmloader/shmloader/producer/config"
)

// The fused store gives the bits the steps give one after the other (the arrow path:
// read, fill_null, normalize, write), for every order of the steps, on values that
// round, overflow float32, are NaN, ±inf, ±0, subnormal or null, with and without
// nulls, for every length (AVX2 steps and the scalar tail) and misaligned input.
func TestFusedFloat32MatchesTheSteps(t *testing.T) {
	norm := config.Transform{Op: config.OpNormalize, Mean: []float64{0.3, -2}, Std: []float64{1.7, 0.25}}
	normTiny := config.Transform{Op: config.OpNormalize, Mean: []float64{1, 1e30}, Std: []float64{1e-300, 4}}
	cases := map[string][]config.Transform{
		"none":         nil,
		"fill":         {fillNum(-1.5)},
		"fill nan":     {fillNum(math.NaN())},
		"norm":         {norm},
		"fill, norm":   {fillNum(7), norm},
		"norm, fill":   {norm, fillNum(7)},
		"norm tiny":    {fillNum(1), normTiny},
		"norm 2^-1074": {{Op: config.OpNormalize, Mean: []float64{0, 5e-324}, Std: []float64{5e-324, math.Ldexp(1, -1030)}}},
		"norm, huge":   {norm, fillNum(1e300)},
		"cast":         {cast("float32")},
		"fill, cast":   {fillNum(0.1), cast("float32"), norm},
		"norm, cast":   {norm, cast("float32"), fillNum(0.1)},
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0x7f800001), math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1e-40, 3.4e38, 1}
	rng := rand.New(rand.NewPCG(11, 12))
	for name, ts := range cases {
		for _, withNulls := range []bool{false, true} {
			for n := 0; n <= 37; n++ {
				vals := make([]float32, n)
				null := make([]byte, n)
				for k := range vals {
					switch rng.IntN(4) {
					case 0:
						vals[k] = special[rng.IntN(len(special))]
					default:
						vals[k] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
					}
					if withNulls && rng.IntN(3) == 0 {
						null[k] = 1
					}
				}
				t.Run(fmt.Sprintf("%s/nulls=%v/n=%d", name, withNulls, n), func(t *testing.T) {
					checkFused(t, ts, vals, null, withNulls)
				})
			}
		}
	}
}

func checkFused(t *testing.T, ts []config.Transform, vals []float32, null []byte, withNulls bool) {
	t.Helper()
	n := len(vals)
	fs := []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float32, Nullable: true}, {Name: "b", Type: arrow.PrimitiveTypes.Float32, Nullable: true}}
	out, err := Compile(config.Output{Name: "x", Transforms: ts, DType: "float32"}, fs)
	if err != nil {
		t.Fatal(err)
	}
	for j := range out.cols {
		if !out.cols[j].fuse.ok {
			t.Fatalf("column %d is not fused: ops %+v", j, out.cols[j].ops)
		}
	}
	cs := make([]*arrow.Chunked, 2)
	for j := range cs {
		b := array.NewFloat32Builder(memory.DefaultAllocator)
		for k, v := range vals {
			if null[k] != 0 {
				b.AppendNull()
			} else {
				b.Append(v)
			}
		}
		cs[j] = arrow.NewChunked(fs[j].Type, []arrow.Array{b.NewArray()})
	}
	want := [][]byte{make([]byte, 8*n)}
	if err := out.Apply(cs, nil, want); err != nil {
		t.Fatal(err)
	}
	// Misaligned little-endian input, as a page's Raw values can be.
	raw := make([]byte, 1+4*n)[1:]
	for k, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(v))
	}
	nl := null
	if !withNulls {
		nl = nil
	}
	got := make([]byte, 8*n)
	for j := range out.cols {
		out.cols[j].fuse.store(got, 4*j, 8, raw, nl)
	}
	if !bytes.Equal(got, want[0]) {
		for k := range 2 * n {
			if g, w := binary.LittleEndian.Uint32(got[4*k:]), binary.LittleEndian.Uint32(want[0][4*k:]); g != w {
				t.Fatalf("value %d (row %d column %d: %g, null %d): fused %#x, steps %#x", k, k/2, k%2, vals[k/2], null[k/2], g, w)
			}
		}
	}
}

// Outputs that are not float32 columns through fill_null and normalize are not fused.
func TestFusedOnlyWhereTheStepsAllow(t *testing.T) {
	f32 := []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Float32}}
	for name, o := range map[string]config.Output{
		"float64 out": {Name: "x", DType: "float64"},
		"clip":        {Name: "x", Transforms: []config.Transform{{Op: config.OpClip, Min: ptr(0.0), Max: ptr(1.0)}}},
		"two fills":   {Name: "x", Transforms: []config.Transform{fillNum(1), fillNum(2)}},
		"log1p":       {Name: "x", Transforms: []config.Transform{{Op: config.OpLog1p}}},
	} {
		out, err := Compile(o, f32)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.cols[0].fuse.ok {
			t.Errorf("%s: fused, ops %+v", name, out.cols[0].ops)
		}
	}
	out, err := Compile(config.Output{Name: "x"}, []arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32}})
	if err != nil {
		t.Fatal(err)
	}
	if out.cols[0].fuse.ok {
		t.Error("an int32 column is fused")
	}
}

func ptr[T any](v T) *T { return &v }
