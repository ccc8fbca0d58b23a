package transform

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// bucketOf is hash_bucket's definition computed with the standard library's FNV-1a:
// the seed's 8 little-endian bytes, then the string's bytes, modulo buckets.
func bucketOf(seed uint64, s string, buckets uint64) int64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(s))
	return int64(h.Sum64() % buckets)
}

func TestListOfStringsHashedThenPadded(t *testing.T) {
	c := mk("tags", arrow.ListOf(arrow.BinaryTypes.String),
		[]any{[]any{"a", "bb", nil}, nil, []any{}},
		[]any{[]any{"x", "y", "z", "w"}})
	o := steps(config.Transform{Op: config.OpFillNull, Fill: config.Scalar{IsStr: true, Str: "?"}},
		config.Transform{Op: config.OpHashBucket, Buckets: 97, HashSeed: 5},
		config.Transform{Op: config.OpPad, Length: 3, PadValue: -1})
	out, dst := run(t, o, nil, c)
	if ts := out.Tensors(); len(ts) != 2 || ts[0].Shape[0] != 3 || ts[1].Name != "out_len" {
		t.Fatalf("tensors %+v", ts)
	}
	h := func(s string) int64 { return bucketOf(5, s, 97) }
	want := []int64{h("a"), h("bb"), h("?"), -1, -1, -1, -1, -1, -1, h("x"), h("y"), h("z")}
	testkit.SameInts(t, "values", testkit.Int64s(dst[0]), want)
	testkit.SameInts(t, "lengths", ints32(dst[1]), []int64{3, 0, 0, 3})
}

func TestFixedSizeList(t *testing.T) {
	emb := arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)
	c := mk("emb", emb,
		[]any{[]any{1.0, 2.0, 3.0}, nil},
		[]any{[]any{4.0, nil, 6.0}, []any{7.0, 8.0, 9.0}})
	nan := math.NaN()

	t.Run("as [B, D]", func(t *testing.T) {
		out, dst := run(t, config.Output{}, nil, c)
		if ts := out.Tensors(); len(ts) != 1 || len(ts[0].Shape) != 1 || ts[0].Shape[0] != 3 {
			t.Fatalf("tensors %+v, want one [3]", ts)
		}
		testkit.SameFloats(t, "values", f32s(dst[0]), []float64{1, 2, 3, nan, nan, nan, 4, nan, 6, 7, 8, 9})
	})
	t.Run("elementwise steps", func(t *testing.T) {
		_, dst := run(t, steps(fillNum(0), config.Transform{Op: config.OpNormalize, Mean: []float64{1}, Std: []float64{2}}), nil, c)
		testkit.SameFloats(t, "values", f32s(dst[0]), []float64{0, 0.5, 1, -0.5, -0.5, -0.5, 1.5, -0.5, 2.5, 3, 3.5, 4})
	})
	t.Run("selected rows", func(t *testing.T) {
		_, dst := run(t, config.Output{}, []int32{1, 3}, c)
		testkit.SameFloats(t, "values", f32s(dst[0]), []float64{nan, nan, nan, 7, 8, 9})
	})
	t.Run("padded like a list", func(t *testing.T) {
		_, dst := run(t, steps(config.Transform{Op: config.OpPad, Length: 4, PadValue: -1}), nil, c)
		testkit.SameFloats(t, "values", f32s(dst[0]), []float64{1, 2, 3, -1, -1, -1, -1, -1, 4, nan, 6, -1, 7, 8, 9, -1})
		testkit.SameInts(t, "lengths", ints32(dst[1]), []int64{3, 0, 3, 3})
		_, dst = run(t, steps(config.Transform{Op: config.OpPad, Length: 2, PadValue: -1}), nil, c)
		testkit.SameFloats(t, "cut", f32s(dst[0]), []float64{1, 2, -1, -1, 4, nan, 7, 8})
	})
}
