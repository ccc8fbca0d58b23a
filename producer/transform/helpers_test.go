package transform

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// col is a test column: its field and its chunks. Values are given as int, uint64,
// float64, bool, string, []any (a list) or nil (null); one []any per chunk.
type col struct {
	f  arrow.Field
	ch *arrow.Chunked
}

func mk(name string, t arrow.DataType, chunks ...[]any) col {
	arrs := make([]arrow.Array, len(chunks))
	for i, vals := range chunks {
		arrs[i] = testkit.Array(t, vals)
	}
	return col{arrow.Field{Name: name, Type: t, Nullable: true}, arrow.NewChunked(t, arrs)}
}

func i64(v any) int64 { return testkit.Int64(v) }

func fieldsOf(cols []col) ([]arrow.Field, []*arrow.Chunked) {
	fs := make([]arrow.Field, len(cols))
	cs := make([]*arrow.Chunked, len(cols))
	for i, c := range cols {
		fs[i], cs[i] = c.f, c.ch
	}
	return fs, cs
}

// run compiles o over cols, applies it to sel and returns the output and its tensors.
func run(t *testing.T, o config.Output, sel []int32, cols ...col) (*Output, [][]byte) {
	t.Helper()
	if o.Name == "" {
		o.Name = "out"
	}
	fs, cs := fieldsOf(cols)
	out, err := Compile(o, fs)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	n := cs[0].Len()
	if sel != nil {
		n = len(sel)
	}
	dst := make([][]byte, len(out.Tensors()))
	for i := range dst {
		dst[i] = make([]byte, n*out.rowBytes(i))
	}
	if err := out.Apply(cs, sel, dst); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return out, dst
}

func steps(ts ...config.Transform) config.Output { return config.Output{Transforms: ts} }

func f32s(b []byte) []float64 {
	v := make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v
}

func ints32(b []byte) []int64 {
	v := make([]int64, len(b)/4)
	for i := range v {
		v[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v
}

func fp(v float64) *float64 { return &v }

var (
	nan  = math.NaN()
	inf  = math.Inf(1)
	ninf = math.Inf(-1)
)
