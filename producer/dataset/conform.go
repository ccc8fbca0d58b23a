package dataset

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// conformChunked converts a column as one file's reader gave it to the dataset's type
// to (see canonical and unify). Buffers that need no change are shared, so converting
// string to large_string or list to large_list copies the offsets only; a dictionary
// is decoded. The caller releases the result; c is left as it was.
func conformChunked(c *arrow.Chunked, to arrow.DataType) (*arrow.Chunked, error) {
	if typeEqual(c.DataType(), to) {
		c.Retain()
		return c, nil
	}
	arrs := make([]arrow.Array, 0, len(c.Chunks()))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for _, ch := range c.Chunks() {
		d, err := conform(ch.Data(), to)
		if err != nil {
			return nil, err
		}
		arrs = append(arrs, array.MakeFromData(d))
		d.Release()
	}
	return arrow.NewChunked(to, arrs), nil
}

// conform converts d to type to, which unify made of d's type and others'.
func conform(d arrow.ArrayData, to arrow.DataType) (arrow.ArrayData, error) {
	from := d.DataType()
	if typeEqual(from, to) {
		d.Retain()
		return d, nil
	}
	switch {
	case from.ID() == arrow.DICTIONARY:
		return decodeDictionary(d, to)
	case isString(from) && isString(to), isBinary(from) && isBinary(to):
		return reoffset(d, to, nil)
	}
	switch to := to.(type) {
	case *arrow.ListType, *arrow.LargeListType:
		if from.ID() != arrow.LIST && from.ID() != arrow.LARGE_LIST {
			break
		}
		child, err := conform(d.Children()[0], to.(arrow.ListLikeType).Elem())
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return reoffset(d, to, child)
	case *arrow.FixedSizeListType:
		if from.ID() != arrow.FIXED_SIZE_LIST {
			break
		}
		child, err := conform(d.Children()[0], to.Elem())
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(to, d.Len(), d.Buffers()[:1], []arrow.ArrayData{child}, d.NullN(), d.Offset()), nil
	case *arrow.StructType:
		ft, ok := from.(*arrow.StructType)
		if !ok {
			break
		}
		children := make([]arrow.ArrayData, to.NumFields())
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for j, f := range to.Fields() {
			i, ok := ft.FieldIdx(f.Name)
			if !ok {
				return nil, fmt.Errorf("struct has no field %q", f.Name)
			}
			c, err := conform(d.Children()[i], f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			children[j] = c
		}
		return array.NewData(to, d.Len(), d.Buffers()[:1], children, d.NullN(), d.Offset()), nil
	}
	return nil, fmt.Errorf("cannot read %s as %s", from, to)
}

// reoffset gives d (strings, binaries or lists) the offsets of type to, 32 or 64 bits
// wide, sharing its other buffers; child replaces a list's elements.
func reoffset(d arrow.ArrayData, to arrow.DataType, child arrow.ArrayData) (arrow.ArrayData, error) {
	bufs := d.Buffers()
	if len(bufs) < 2 {
		return nil, fmt.Errorf("%s array without offsets", d.DataType())
	}
	n := d.Offset() + d.Len() + 1
	from64, to64 := wideOffsets(d.DataType()), wideOffsets(to)
	offs := bufs[1]
	if from64 != to64 {
		var raw []byte
		if bufs[1] != nil {
			raw = bufs[1].Bytes()
		}
		var out []byte
		switch {
		case len(raw) < n*offsetWidth(from64) && d.Len() > 0:
			return nil, fmt.Errorf("%s array: %d bytes of offsets for %d values", d.DataType(), len(raw), d.Len())
		case len(raw) < n*offsetWidth(from64):
			out = make([]byte, n*offsetWidth(to64))
		case to64:
			in := arrow.Int32Traits.CastFromBytes(raw)[:n]
			o := make([]int64, n)
			for i, v := range in {
				o[i] = int64(v)
			}
			out = arrow.Int64Traits.CastToBytes(o)
		default:
			in := arrow.Int64Traits.CastFromBytes(raw)[:n]
			o := make([]int32, n)
			for i, v := range in {
				if v < 0 || v > math.MaxInt32 {
					return nil, fmt.Errorf("offset %d does not fit %s", v, to)
				}
				o[i] = int32(v)
			}
			out = arrow.Int32Traits.CastToBytes(o)
		}
		offs = memory.NewBufferBytes(out)
		defer offs.Release()
	}
	nb := append([]*memory.Buffer{bufs[0], offs}, bufs[2:]...)
	var children []arrow.ArrayData
	if child != nil {
		children = []arrow.ArrayData{child}
	}
	return array.NewData(to, d.Len(), nb, children, d.NullN(), d.Offset()), nil
}

func wideOffsets(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.LARGE_LIST:
		return true
	}
	return false
}

func offsetWidth(wide bool) int {
	if wide {
		return 8
	}
	return 4
}

// decodeDictionary turns a dictionary of strings or binaries into plain values of type
// to; a null index, or an index of a null entry, is a null.
func decodeDictionary(d arrow.ArrayData, to arrow.DataType) (arrow.ArrayData, error) {
	dt := d.DataType().(*arrow.DictionaryType)
	if !(isString(to) || isBinary(to)) || !(isString(dt.ValueType) || isBinary(dt.ValueType)) {
		return nil, fmt.Errorf("cannot read %s as %s", dt, to)
	}
	a := array.MakeFromData(d).(*array.Dictionary)
	defer a.Release()
	dict := a.Dictionary()
	value := binaryValues(dict)
	n := a.Len()
	offs := make([]int64, n+1)
	valid := make([]byte, bitutil.BytesForBits(int64(n)))
	var data []byte
	nulls := 0
	for i := range n {
		offs[i+1] = offs[i]
		if a.IsNull(i) {
			nulls++
			continue
		}
		k := a.GetValueIndex(i)
		if k < 0 || k >= dict.Len() {
			return nil, kindf(ErrCorrupt, "dictionary index %d of value %d is outside the dictionary of %d entries", k, i, dict.Len())
		}
		if dict.IsNull(k) {
			nulls++
			continue
		}
		bitutil.SetBit(valid, i)
		data = append(data, value(k)...)
		offs[i+1] = int64(len(data))
	}
	var ob []byte
	if wideOffsets(to) {
		ob = arrow.Int64Traits.CastToBytes(offs)
	} else {
		if len(data) > math.MaxInt32 {
			return nil, fmt.Errorf("%d bytes of values do not fit %s", len(data), to)
		}
		o := make([]int32, n+1)
		for i, v := range offs {
			o[i] = int32(v)
		}
		ob = arrow.Int32Traits.CastToBytes(o)
	}
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(valid)
	}
	return array.NewData(to, n, []*memory.Buffer{vb, memory.NewBufferBytes(ob), memory.NewBufferBytes(data)}, nil, nulls, 0), nil
}

// binaryValues reads entry k of a string or binary array as a string, without a copy.
func binaryValues(a arrow.Array) func(k int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.Binary:
		return a.ValueString
	case *array.LargeBinary:
		return a.ValueString
	}
	return func(int) string { return "" } // decodeDictionary checked the type
}
