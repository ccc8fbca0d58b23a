package transform

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shmloader/shmloader/producer/config"
)

// benchRows is one row group as the design measures it; -short makes it small.
func benchRows() int {
	if testing.Short() {
		return 1024
	}
	return 16384
}

// floatCols makes n float32 columns of rows values, about 1% null.
func floatCols(n, rows int) ([]arrow.Field, []*arrow.Chunked) {
	rng := rand.New(rand.NewPCG(3, 4))
	fs := make([]arrow.Field, n)
	cs := make([]*arrow.Chunked, n)
	for j := range n {
		b := array.NewFloat32Builder(memory.DefaultAllocator)
		for range rows {
			if rng.IntN(100) == 0 {
				b.AppendNull()
			} else {
				b.Append(float32(rng.NormFloat64()))
			}
		}
		a := b.NewArray()
		fs[j] = arrow.Field{Name: fmt.Sprintf("f%03d", j), Type: arrow.PrimitiveTypes.Float32, Nullable: true}
		cs[j] = arrow.NewChunked(fs[j].Type, []arrow.Array{a})
	}
	return fs, cs
}

func benchApply(b *testing.B, o config.Output, fs []arrow.Field, cs []*arrow.Chunked, sel []int32) {
	out, err := Compile(o, fs)
	if err != nil {
		b.Fatal(err)
	}
	n := cs[0].Len()
	if sel != nil {
		n = len(sel)
	}
	dst := make([][]byte, len(out.Tensors()))
	for i := range dst {
		dst[i] = make([]byte, n*out.rowBytes(i))
	}
	b.SetBytes(int64(len(dst[0])))
	b.ResetTimer()
	for range b.N {
		if err := out.Apply(cs, sel, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
}

func normAll(n int) config.Transform {
	mean, std := make([]float64, n), make([]float64, n)
	for j := range n {
		mean[j], std[j] = float64(j)/10, 1+float64(j)/100
	}
	return config.Transform{Op: config.OpNormalize, Mean: mean, Std: std}
}

// BenchmarkApplyStacked100: 100 float32 columns of one row group, fill_null + normalize,
// into a [B, 100] float32 tensor: the hot path.
func BenchmarkApplyStacked100(b *testing.B) {
	fs, cs := floatCols(100, benchRows())
	benchApply(b, config.Output{Name: "x", Transforms: []config.Transform{fillNum(0), normAll(100)}}, fs, cs, nil)
}

// BenchmarkApplyStacked100Sel: the same with every other row selected by a filter.
func BenchmarkApplyStacked100Sel(b *testing.B) {
	fs, cs := floatCols(100, benchRows())
	sel := make([]int32, 0, benchRows()/2)
	for r := 0; r < benchRows(); r += 2 {
		sel = append(sel, int32(r))
	}
	benchApply(b, config.Output{Name: "x", Transforms: []config.Transform{fillNum(0), normAll(100)}}, fs, cs, sel)
}

// BenchmarkApplyStacked100Plain: no transforms, float32 to float32: the copy alone.
func BenchmarkApplyStacked100Plain(b *testing.B) {
	fs, cs := floatCols(100, benchRows())
	benchApply(b, config.Output{Name: "x"}, fs, cs, nil)
}

// BenchmarkApplyHashStrings: 26 string columns hashed into [B, 26] int64.
func BenchmarkApplyHashStrings(b *testing.B) {
	rows := benchRows()
	fs := make([]arrow.Field, 26)
	cs := make([]*arrow.Chunked, 26)
	for j := range fs {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for r := range rows {
			sb.Append(fmt.Sprintf("cat_%d_%d", j, r*7919%1000))
		}
		fs[j] = arrow.Field{Name: fmt.Sprintf("c%02d", j), Type: arrow.BinaryTypes.String}
		cs[j] = arrow.NewChunked(fs[j].Type, []arrow.Array{sb.NewArray()})
	}
	hb := config.Transform{Op: config.OpHashBucket, Buckets: 100000, HashSeed: 1}
	benchApply(b, config.Output{Name: "x", Transforms: []config.Transform{hb}}, fs, cs, nil)
}

// BenchmarkApplyPad: a list<float32> of 0..40 elements padded to 32.
func BenchmarkApplyPad(b *testing.B) {
	rows := benchRows()
	rng := rand.New(rand.NewPCG(5, 6))
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float32)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for range rows {
		lb.Append(true)
		for range rng.IntN(41) {
			vb.Append(rng.Float32())
		}
	}
	f := arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)}
	cs := []*arrow.Chunked{arrow.NewChunked(f.Type, []arrow.Array{lb.NewArray()})}
	pad := config.Transform{Op: config.OpPad, Length: 32}
	benchApply(b, config.Output{Name: "x", Transforms: []config.Transform{pad}}, []arrow.Field{f}, cs, nil)
}

// BenchmarkTransposeFloor is the floor the stacked benchmarks compare with: the same
// 100 float32 columns copied into [B, 100] float32 by a bare loop, no nulls, no steps.
func BenchmarkTransposeFloor(b *testing.B) {
	_, cs := floatCols(100, benchRows())
	rows := benchRows()
	dst := make([]byte, rows*400)
	b.ResetTimer()
	for range b.N {
		for k0 := 0; k0 < rows; k0 += blockValues {
			for j := range 100 {
				off := (k0*100 + j) * 4
				for _, v := range cs[j].Chunk(0).(*array.Float32).Float32Values()[k0:min(k0+blockValues, rows)] {
					binary.LittleEndian.PutUint32(dst[off:], math.Float32bits(v))
					off += 400
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}

// BenchmarkApplyDatetime: calendar parts of spread ms timestamps in UTC (arithmetic
// only) and in a zone with DST (offsets cached per DST period), and decimals as floats.
func BenchmarkApplyDatetime(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	rows := benchRows()
	ts := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Millisecond})
	dec := array.NewDecimal128Builder(memory.DefaultAllocator, &arrow.Decimal128Type{Precision: 38, Scale: 18})
	for range rows {
		ts.Append(arrow.Timestamp(1.6e12 + rng.Int64N(1e11)))
		dec.Append(decimal128.FromI64(rng.Int64()))
	}
	col := func(name string, a arrow.Array) ([]arrow.Field, []*arrow.Chunked) {
		return []arrow.Field{{Name: name, Type: a.DataType()}}, []*arrow.Chunked{arrow.NewChunked(a.DataType(), []arrow.Array{a})}
	}
	tf, tc := col("t", ts.NewArray())
	for _, c := range []struct{ name, part, tz string }{{"hour", "hour", ""}, {"day_of_year", "day_of_year", ""},
		{"day_of_year_NY", "day_of_year", "America/New_York"}, {"unix_seconds", "unix_seconds", ""}} {
		b.Run(c.name, func(b *testing.B) {
			benchApply(b, config.Output{Name: "x", Transforms: []config.Transform{{Op: config.OpDatetime, Part: c.part, TZ: c.tz}}}, tf, tc, nil)
		})
	}
	df, dc := col("d", dec.NewArray())
	b.Run("decimal128_float", func(b *testing.B) { benchApply(b, config.Output{Name: "x", DType: "float64"}, df, dc, nil) })
}
