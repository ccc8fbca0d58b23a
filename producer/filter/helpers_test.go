package filter

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
)

// value is one test cell: null, or a number (int64, uint64, float64, bool) or a string.
type value struct {
	null bool
	i    int64
	u    uint64
	f    float64
	b    bool
	s    string
}

// build makes a chunked column of type t from vals, cut into chunks at cuts.
func build(t arrow.DataType, vals []value, cuts ...int) *arrow.Chunked {
	var arrs []arrow.Array
	bounds := []int{0}
	for _, c := range cuts {
		bounds = append(bounds, min(c, len(vals)))
	}
	bounds = append(bounds, len(vals))
	for c := 1; c < len(bounds); c++ {
		b := array.NewBuilder(memory.DefaultAllocator, t)
		for _, v := range vals[bounds[c-1]:bounds[c]] {
			if v.null {
				b.AppendNull()
				continue
			}
			switch b := b.(type) {
			case *array.Int8Builder:
				b.Append(int8(v.i))
			case *array.Int32Builder:
				b.Append(int32(v.i))
			case *array.Int64Builder:
				b.Append(v.i)
			case *array.Uint64Builder:
				b.Append(v.u)
			case *array.Float32Builder:
				b.Append(float32(v.f))
			case *array.Float64Builder:
				b.Append(v.f)
			case *array.BooleanBuilder:
				b.Append(v.b)
			case *array.StringBuilder:
				b.Append(v.s)
			case *array.BinaryBuilder:
				b.Append([]byte(v.s))
			}
		}
		arrs = append(arrs, b.NewArray())
		b.Release()
	}
	return arrow.NewChunked(t, arrs)
}

// exact is the exact value of a numeric cell of type t, nil for NaN.
func exact(t arrow.DataType, v value) *big.Float {
	switch t.ID() {
	case arrow.UINT64:
		return new(big.Float).SetUint64(v.u)
	case arrow.FLOAT32, arrow.FLOAT64:
		f := v.f
		if t.ID() == arrow.FLOAT32 {
			f = float64(float32(f))
		}
		if f != f {
			return nil
		}
		return big.NewFloat(f)
	case arrow.BOOL:
		if v.b {
			return big.NewFloat(1)
		}
		return big.NewFloat(0)
	}
	return new(big.Float).SetInt64(v.i)
}

// brute decides one cell by the documented semantics, with exact arithmetic.
func brute(t arrow.DataType, v value, p config.Predicate) bool {
	switch p.Op {
	case config.PredNull:
		return v.null
	case config.PredNotNull:
		return !v.null
	}
	if v.null {
		return false
	}
	eq := func(c config.Scalar) bool { return cmpCell(t, v, c) == 0 }
	switch p.Op {
	case config.PredIn, config.PredNotIn:
		any := false
		for _, c := range p.Values {
			any = any || eq(c)
		}
		return any == (p.Op == config.PredIn)
	}
	r := cmpCell(t, v, p.Value)
	if r == 2 {
		return p.Op == config.PredNe
	}
	switch p.Op {
	case config.PredEq:
		return r == 0
	case config.PredNe:
		return r != 0
	case config.PredLt:
		return r < 0
	case config.PredLe:
		return r <= 0
	case config.PredGt:
		return r > 0
	}
	return r >= 0
}

// cmpCell compares a cell with a constant: -1, 0, 1, or 2 when either is NaN.
func cmpCell(t arrow.DataType, v value, c config.Scalar) int {
	if c.IsStr {
		switch {
		case v.s < c.Str:
			return -1
		case v.s > c.Str:
			return 1
		}
		return 0
	}
	x := exact(t, v)
	if x == nil || math.IsNaN(c.Num) {
		return 2
	}
	return x.Cmp(big.NewFloat(c.Num))
}

// statsOf computes what a footer would say about vals, as dataset.Stats does.
func statsOf(t arrow.DataType, vals []value) dataset.Stats {
	st := dataset.Stats{Rows: int64(len(vals)), HasNullCount: true}
	first := true
	for _, v := range vals {
		if v.null {
			st.NullCount++
			continue
		}
		switch t.ID() {
		case arrow.INT8, arrow.INT32, arrow.INT64:
			if first || v.i < st.MinI {
				st.MinI, st.MinF = v.i, float64(v.i)
			}
			if first || v.i > st.MaxI {
				st.MaxI, st.MaxF = v.i, float64(v.i)
			}
			st.Kind = dataset.KindInt
		case arrow.FLOAT32, arrow.FLOAT64:
			f := v.f
			if t.ID() == arrow.FLOAT32 {
				f = float64(float32(f))
			}
			if f != f {
				continue
			}
			if first || f < st.MinF {
				st.MinF = f
			}
			if first || f > st.MaxF {
				st.MaxF = f
			}
			st.Kind = dataset.KindFloat
		case arrow.STRING, arrow.BINARY:
			if first || v.s < st.MinS {
				st.MinS = v.s
			}
			if first || v.s > st.MaxS {
				st.MaxS = v.s
			}
			st.Kind = dataset.KindString
		default:
			continue
		}
		first = false
	}
	st.HasMinMax = st.Kind != dataset.KindNone
	return st
}
