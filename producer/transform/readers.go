package transform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

// newReader checks chunk a enough that reading it cannot go out of bounds (bitmaps long
// enough, offsets ascending and inside their buffers) and returns its reader; listLen
// is the pad length of a list column, dec how a decimal column is read.
func newReader(a arrow.Array, listLen int, dec decInfo) (chunkReader, error) {
	n := a.Len()
	if n == 0 {
		return nopChunk{}, nil
	}
	v := validityOf(a)
	if v.bm != nil && len(v.bm)*8 < v.off+n {
		return nil, fmt.Errorf("null bitmap of %d bytes for %d values", len(v.bm), v.off+n)
	}
	switch a := a.(type) {
	case *array.Int8:
		return intChunk[int8]{a.Int8Values(), v}, nil
	case *array.Int16:
		return intChunk[int16]{a.Int16Values(), v}, nil
	case *array.Int32:
		return intChunk[int32]{a.Int32Values(), v}, nil
	case *array.Int64:
		return intChunk[int64]{a.Int64Values(), v}, nil
	case *array.Uint8:
		return intChunk[uint8]{a.Uint8Values(), v}, nil
	case *array.Uint16:
		return intChunk[uint16]{a.Uint16Values(), v}, nil
	case *array.Uint32:
		return intChunk[uint32]{a.Uint32Values(), v}, nil
	case *array.Uint64:
		return intChunk[uint64]{a.Uint64Values(), v}, nil
	case *array.Float16:
		return f16Chunk{a.Values(), v}, nil
	case *array.Float32:
		return floatChunk[float32]{a.Float32Values(), v}, nil
	case *array.Float64:
		return floatChunk[float64]{a.Float64Values(), v}, nil
	case *array.Boolean:
		bufs := a.Data().Buffers()
		if len(bufs) < 2 || bufs[1] == nil || bufs[1].Len()*8 < a.Data().Offset()+n {
			return nil, fmt.Errorf("boolean values buffer too short for %d values", n)
		}
		return boolChunk{bufs[1].Bytes(), a.Data().Offset(), v}, nil
	case *array.String:
		return strChunk{a, v}, ascending(a.ValueOffsets())
	case *array.LargeString:
		return strChunk{a, v}, ascending(a.ValueOffsets())
	case *array.Binary:
		return strChunk{binValues{a}, v}, ascending(a.ValueOffsets())
	case *array.LargeBinary:
		return strChunk{largeBinValues{a}, v}, ascending(a.ValueOffsets())
	case *array.Timestamp:
		return intChunk[arrow.Timestamp]{a.TimestampValues(), v}, nil
	case *array.Date32:
		return intChunk[arrow.Date32]{a.Date32Values(), v}, nil
	case *array.Date64:
		return intChunk[arrow.Date64]{a.Date64Values(), v}, nil
	case *array.Time32:
		return intChunk[arrow.Time32]{a.Time32Values(), v}, nil
	case *array.Time64:
		return intChunk[arrow.Time64]{a.Time64Values(), v}, nil
	case *array.Decimal32:
		return decChunk[decimal.Decimal32]{a.Values(), v, dec, func(x decimal.Decimal32, w *[4]uint64) []uint64 {
			w[0] = uint64(int64(x))
			return w[:1]
		}}, nil
	case *array.Decimal64:
		return decChunk[decimal.Decimal64]{a.Values(), v, dec, func(x decimal.Decimal64, w *[4]uint64) []uint64 {
			w[0] = uint64(int64(x))
			return w[:1]
		}}, nil
	case *array.Decimal128:
		return decChunk[decimal128.Num]{a.Values(), v, dec, func(x decimal128.Num, w *[4]uint64) []uint64 {
			w[0], w[1] = x.LowBits(), uint64(x.HighBits())
			return w[:2]
		}}, nil
	case *array.Decimal256:
		return decChunk[decimal256.Num]{a.Values(), v, dec, func(x decimal256.Num, w *[4]uint64) []uint64 {
			*w = x.Array()
			return w[:]
		}}, nil
	case *array.Dictionary:
		return newDictChunk(a, v)
	case *array.List:
		return newListChunk(a.Offsets(), a.Data().Offset(), n, v, a.ListValues(), listLen)
	case *array.LargeList:
		return newListChunk(a.Offsets(), a.Data().Offset(), n, v, a.ListValues(), listLen)
	case *array.FixedSizeList:
		return newFixedListChunk(a, v, listLen)
	}
	return nil, fmt.Errorf("cannot read a %s array", a.DataType())
}

// ascending checks that offsets start at 0 or above and never go down; Arrow checked
// at construction that the last one lies inside the values.
func ascending[O int32 | int64](offs []O) error {
	if len(offs) > 0 && offs[0] < 0 {
		return fmt.Errorf("offset 0 is %d", offs[0])
	}
	for k := 1; k < len(offs); k++ {
		if offs[k] < offs[k-1] {
			return fmt.Errorf("offset %d (%d) below offset %d (%d)", k, offs[k], k-1, offs[k-1])
		}
	}
	return nil
}

// nopChunk is an empty chunk: no row ever falls in it.
type nopChunk struct{}

func (nopChunk) readRange(*work, int, int, int) bool  { return false }
func (nopChunk) gather(*work, int, []int32, int) bool { return false }

// strValues reads string and binary arrays alike, without copying.
type strValues interface{ Value(i int) string }

type binValues struct{ a *array.Binary }
type largeBinValues struct{ a *array.LargeBinary }

func (b binValues) Value(i int) string      { return b.a.ValueString(i) }
func (b largeBinValues) Value(i int) string { return b.a.ValueString(i) }

// strChunk hashes strings as it reads them (hash_bucket, with its fill_null).
type strChunk struct {
	a strValues
	v validity
}

func (c strChunk) readRange(w *work, at, lo, hi int) bool {
	nulls := c.v.rangeInto(w.st[at:at+hi-lo], lo)
	for k := range hi - lo {
		c.one(w, at+k, lo+k, nulls)
	}
	return nulls && !w.hash.filled
}

func (c strChunk) gather(w *work, at int, sel []int32, base int) bool {
	nulls := c.v.gatherInto(w.st[at:], sel, base)
	for k, r := range sel {
		c.one(w, at+k, int(r)-base, nulls)
	}
	return nulls && !w.hash.filled
}

func (c strChunk) one(w *work, at, r int, nulls bool) {
	switch {
	case !nulls || w.st[at] == stValid:
		w.i[at] = w.hash.bucket(c.a.Value(r))
	case w.hash.filled:
		w.i[at], w.st[at] = w.hash.fill, stValid
	default:
		w.i[at] = 0
	}
}

// decChunk reads decimals as the column's decInfo says: floats, or scaled ints.
type decChunk[T any] struct {
	vals  []T
	v     validity
	dec   decInfo
	words func(T, *[4]uint64) []uint64
}

func (c decChunk[T]) readRange(w *work, at, lo, hi int) bool {
	var buf [4]uint64
	for k, x := range c.vals[lo:hi] {
		c.dec.put(w, at+k, c.words(x, &buf))
	}
	return c.v.rangeInto(w.st[at:at+hi-lo], lo)
}

func (c decChunk[T]) gather(w *work, at int, sel []int32, base int) bool {
	var buf [4]uint64
	for k, r := range sel {
		c.dec.put(w, at+k, c.words(c.vals[int(r)-base], &buf))
	}
	return c.v.gatherInto(w.st[at:], sel, base)
}

// newDictChunk reads a dictionary of strings (a pandas categorical) as its values,
// hashed as they are read. Its indices are checked against the dictionary first.
func newDictChunk(a *array.Dictionary, v validity) (chunkReader, error) {
	d := a.Dictionary()
	var vals strValues
	switch d := d.(type) {
	case *array.String:
		vals = d
	case *array.LargeString:
		vals = d
	case *array.Binary:
		vals = binValues{d}
	case *array.LargeBinary:
		vals = largeBinValues{d}
	default:
		return nil, fmt.Errorf("cannot read a dictionary of %s", d.DataType())
	}
	if d.NullN() > 0 {
		return nil, fmt.Errorf("dictionary holds %d nulls", d.NullN())
	}
	if _, err := newReader(d, 0, decInfo{}); err != nil {
		return nil, fmt.Errorf("dictionary: %w", err)
	}
	bufs, n := a.Data().Buffers(), a.Len()
	width := a.Indices().DataType().(arrow.FixedWidthDataType).Bytes()
	if len(bufs) < 2 || bufs[1] == nil || bufs[1].Len() < (a.Data().Offset()+n)*width {
		return nil, fmt.Errorf("dictionary indices buffer too short for %d values", n)
	}
	for i := range n {
		if x := a.GetValueIndex(i); (v.bm == nil || bit(v.bm, v.off+i) == 1) && (x < 0 || x >= d.Len()) {
			return nil, fmt.Errorf("dictionary index %d of row %d outside the %d values", x, i, d.Len())
		}
	}
	return strChunk{dictValues{a, vals}, v}, nil
}

// dictValues reads a dictionary's rows as its values.
type dictValues struct {
	a    *array.Dictionary
	vals strValues
}

func (d dictValues) Value(i int) string { return d.vals.Value(d.a.GetValueIndex(i)) }
