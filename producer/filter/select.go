package filter

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Select returns the ascending row indices (0..rows-1) that pass; cols are in Columns()
// order. The result is never nil: no passing row gives an empty slice, so callers can
// tell it from "all rows".
func (f *Filter) Select(cols []*arrow.Chunked, rows int) ([]int32, error) {
	if rows < 0 || rows > 1<<31-1 {
		return nil, fmt.Errorf("filter: %d rows, want 0..%d", rows, 1<<31-1)
	}
	if f.Empty() {
		all := make([]int32, rows)
		for i := range all {
			all[i] = int32(i)
		}
		return all, nil
	}
	if len(cols) != len(f.cols) {
		return nil, fmt.Errorf("filter: %d columns given, want %d (%v)", len(cols), len(f.cols), f.cols)
	}
	for i, c := range cols {
		if c == nil || c.Len() != rows {
			n := -1
			if c != nil {
				n = c.Len()
			}
			return nil, fmt.Errorf("filter: column %q: %d rows, want %d", f.cols[i], n, rows)
		}
	}
	keep := make([]bool, rows)
	for i := range keep {
		keep[i] = true
	}
	for i := range f.preds {
		p := &f.preds[i]
		at := 0
		for j, ch := range cols[p.idx].Chunks() {
			if ch.Len() > 0 {
				if err := p.eval(keep[at:at+ch.Len()], ch); err != nil {
					return nil, fmt.Errorf("filter: column %q, chunk %d: %w", p.col, j, err)
				}
			}
			at += ch.Len()
		}
	}
	sel := make([]int32, 0, rows)
	for i, k := range keep {
		if k {
			sel = append(sel, int32(i))
		}
	}
	return slices.Clip(sel), nil
}

// eval clears keep[i] for each row i of chunk a that fails p.
func (p *pred) eval(keep []bool, a arrow.Array) error {
	if a.DataType().ID() != p.typ.ID() {
		return fmt.Errorf("chunk is %s, compiled for %s", a.DataType(), p.typ)
	}
	bm, off := a.NullBitmapBytes(), a.Data().Offset()
	if a.NullN() == 0 || len(bm) == 0 {
		bm = nil
	} else if len(bm)*8 < off+a.Len() {
		return fmt.Errorf("null bitmap of %d bytes for %d values", len(bm), off+a.Len())
	}
	switch p.code {
	case opNull, opNotNull:
		want := p.code == opNull
		for i := range keep {
			keep[i] = keep[i] && (bm != nil && bitutil.BitIsNotSet(bm, off+i)) == want
		}
		return nil
	}
	// Null rows fail every comparison.
	if bm != nil {
		for i := range keep {
			keep[i] = keep[i] && bitutil.BitIsSet(bm, off+i)
		}
	}
	switch a := a.(type) {
	case *array.Int8:
		evalInts(p, keep, a.Int8Values())
	case *array.Int16:
		evalInts(p, keep, a.Int16Values())
	case *array.Int32:
		evalInts(p, keep, a.Int32Values())
	case *array.Int64:
		evalInts(p, keep, a.Int64Values())
	case *array.Uint8:
		evalInts(p, keep, a.Uint8Values())
	case *array.Uint16:
		evalInts(p, keep, a.Uint16Values())
	case *array.Uint32:
		evalInts(p, keep, a.Uint32Values())
	case *array.Uint64:
		evalUints(p, keep, a.Uint64Values())
	case *array.Boolean:
		if bufs := a.Data().Buffers(); len(bufs) < 2 || bufs[1] == nil || bufs[1].Len()*8 < off+a.Len() {
			return fmt.Errorf("boolean values buffer too short for %d values", a.Len())
		}
		evalBools(p, keep, a)
	case *array.Float16:
		for i, v := range a.Values() {
			keep[i] = keep[i] && p.float(float64(v.Float32()))
		}
	case *array.Float32:
		evalFloats(p, keep, a.Float32Values())
	case *array.Float64:
		evalFloats(p, keep, a.Float64Values())
	case *array.String:
		return evalStrings(p, keep, a, a.ValueOffsets())
	case *array.LargeString:
		return evalStrings(p, keep, a, a.ValueOffsets())
	case *array.Binary:
		return evalStrings(p, keep, binValues{a}, a.ValueOffsets())
	case *array.LargeBinary:
		return evalStrings(p, keep, largeBinValues{a}, a.ValueOffsets())
	default:
		return fmt.Errorf("cannot compare a %s array", a.DataType())
	}
	return nil
}
