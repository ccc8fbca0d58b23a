package filter

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/shmloader/shmloader/producer/config"
)

// TestSelectSliced: chunks that are slices of larger arrays (offsets into values and
// bitmaps), several predicates AND-ed over two columns.
func TestSelectSliced(t *testing.T) {
	ivals := []value{{i: 0}, null, {i: 2}, {i: 3}, null, {i: 5}, {i: 6}, {i: 7}, {i: 8}, null, {i: 10}, {i: 11}}
	svals := []value{{s: "a"}, {s: "b"}, null, {s: "d"}, {s: "e"}, {s: "f"}, null, {s: "h"}, {s: "i"}, {s: "j"}, {s: "k"}, {s: "l"}}
	slice := func(typ arrow.DataType, vals []value) (*arrow.Chunked, []value) {
		whole := build(typ, vals).Chunk(0)
		c := arrow.NewChunked(typ, []arrow.Array{array.NewSlice(whole, 1, 6), array.NewSlice(whole, 7, 12)})
		return c, append(append([]value(nil), vals[1:6]...), vals[7:12]...)
	}
	ic, iv := slice(arrow.PrimitiveTypes.Int64, ivals)
	sc, sv := slice(arrow.BinaryTypes.String, svals)
	preds := []config.Predicate{
		{Column: "s", Op: config.PredNe, Value: str("k")},
		{Column: "i", Op: config.PredGe, Value: num(2.5)},
		{Column: "b", Op: config.PredNotNull},
	}
	fields := map[string]arrow.Field{"i": {Name: "i", Type: arrow.PrimitiveTypes.Int64}, "s": {Name: "s", Type: arrow.BinaryTypes.String},
		"b": {Name: "b", Type: arrow.FixedWidthTypes.Boolean}}
	f, err := Compile(preds, fields)
	if err != nil {
		t.Fatal(err)
	}
	bv := make([]value, len(iv))
	for r := range bv {
		bv[r] = value{b: r%3 == 0, null: r == 4}
	}
	bc := build(arrow.FixedWidthTypes.Boolean, bv, 3)
	sel, err := f.Select([]*arrow.Chunked{bc, ic, sc}, len(iv)) // Columns() order: b, i, s
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	for r := range iv {
		if brute(arrow.BinaryTypes.String, sv[r], preds[0]) && brute(arrow.PrimitiveTypes.Int64, iv[r], preds[1]) &&
			brute(arrow.FixedWidthTypes.Boolean, bv[r], preds[2]) {
			want = append(want, int32(r))
		}
	}
	if fmt.Sprint(sel) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("rows %v, want %v", sel, want)
	}
}

// BenchmarkSelect: two range predicates over 16K-row float32 and int64 columns.
func BenchmarkSelect(b *testing.B) {
	const rows = 16384
	fv, iv := make([]value, rows), make([]value, rows)
	for r := range rows {
		fv[r] = value{f: float64(r%1000) / 10, null: r%97 == 0}
		iv[r] = value{i: int64(r % 13)}
	}
	cols := []*arrow.Chunked{build(arrow.PrimitiveTypes.Float32, fv), build(arrow.PrimitiveTypes.Int64, iv)}
	f, err := Compile([]config.Predicate{{Column: "f", Op: config.PredLt, Value: num(50)}, {Column: "i", Op: config.PredNe, Value: num(3)}},
		map[string]arrow.Field{"f": {Name: "f", Type: arrow.PrimitiveTypes.Float32}, "i": {Name: "i", Type: arrow.PrimitiveTypes.Int64}})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := f.Select(cols, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}
