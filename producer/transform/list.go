package transform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// listChunk reads a list column into rows of n positions: the first min(len, n)
// elements, then positions marked absent for pad to fill. A null list is all absent.
type listChunk[O int32 | int64] struct {
	offs []O // the chunk's len+1 offsets into the elements
	v    validity
	elem chunkReader
	n    int
}

func newListChunk[O int32 | int64](all []O, off, rows int, v validity, elems arrow.Array, n int) (chunkReader, error) {
	if len(all) < off+rows+1 {
		return nil, fmt.Errorf("%d list offsets for %d lists", len(all)-off, rows)
	}
	offs := all[off : off+rows+1]
	if err := ascending(offs); err != nil {
		return nil, err
	}
	if int64(offs[rows]) > int64(elems.Len()) {
		return nil, fmt.Errorf("list offsets end at %d, past %d elements", offs[rows], elems.Len())
	}
	elem, err := newReader(elems, 0, decInfo{})
	if err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	return listChunk[O]{offs, v, elem, n}, nil
}

// row reads list r of the chunk into row k of w.
func (c listChunk[O]) row(w *work, k, r int) bool {
	pos := k * c.n
	cnt := 0
	if c.v.bm == nil || bitutil.BitIsSet(c.v.bm, c.v.off+r) {
		cnt = int(min(c.offs[r+1]-c.offs[r], O(c.n)))
	}
	w.lens[k] = int32(cnt)
	nulls := false
	if cnt > 0 {
		s := int(c.offs[r])
		nulls = c.elem.readRange(w, pos, s, s+cnt)
	}
	if cnt < c.n {
		st := w.st[pos+cnt : pos+c.n]
		for i := range st {
			st[i] = stAbsent
		}
		nulls = true
	}
	return nulls
}

func (c listChunk[O]) readRange(w *work, at, lo, hi int) bool {
	nulls := false
	for r := lo; r < hi; r++ {
		nulls = c.row(w, at+r-lo, r) || nulls
	}
	return nulls
}

func (c listChunk[O]) gather(w *work, at int, sel []int32, base int) bool {
	nulls := false
	for k, r := range sel {
		nulls = c.row(w, at+k, int(r)-base) || nulls
	}
	return nulls
}

// fixedListChunk reads a fixed_size_list column: every row holds d elements, back to
// back in the elements array, so a run of rows is one run of elements (no per-row work
// unless rows are selected or null). Into rows of n positions: with n == d (no pad) a
// null row is d nulls; with a pad of n, rows are lists of length d (a null one of length
// 0), cut or padded as pad says.
type fixedListChunk struct {
	d, n, off int // off: the array's first row
	v         validity
	elem      chunkReader
}

func newFixedListChunk(a *array.FixedSizeList, v validity, n int) (chunkReader, error) {
	d := int(a.DataType().(*arrow.FixedSizeListType).Len())
	rows, off := a.Len(), a.Data().Offset()
	if d < 1 || a.ListValues().Len() < (off+rows)*d {
		return nil, fmt.Errorf("fixed_size_list of %d rows of %d needs %d elements, has %d", rows, d, (off+rows)*d, a.ListValues().Len())
	}
	elem, err := newReader(a.ListValues(), 0, decInfo{})
	if err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	return fixedListChunk{d: d, n: n, off: off, v: v, elem: elem}, nil
}

func (c fixedListChunk) readRange(w *work, at, lo, hi int) bool {
	if c.n != c.d {
		nulls := false
		for r := lo; r < hi; r++ {
			nulls = c.row(w, at+r-lo, r) || nulls
		}
		return nulls
	}
	nulls := c.elem.readRange(w, at*c.d, (c.off+lo)*c.d, (c.off+hi)*c.d)
	for k := range hi - lo {
		w.lens[at+k] = int32(c.d)
		if c.v.bm != nil && !bitutil.BitIsSet(c.v.bm, c.v.off+lo+k) {
			c.nullRow(w, at+k)
			nulls = true
		}
	}
	return nulls
}

func (c fixedListChunk) gather(w *work, at int, sel []int32, base int) bool {
	nulls := false
	for k, r := range sel {
		nulls = c.row(w, at+k, int(r)-base) || nulls
	}
	return nulls
}

// row reads row r into row k of w.
func (c fixedListChunk) row(w *work, k, r int) bool {
	valid := c.v.bm == nil || bitutil.BitIsSet(c.v.bm, c.v.off+r)
	if c.n == c.d && !valid {
		w.lens[k] = int32(c.d)
		c.nullRow(w, k)
		return true
	}
	cnt := 0
	if valid {
		cnt = min(c.d, c.n)
	}
	w.lens[k] = int32(cnt)
	nulls := false
	if cnt > 0 {
		s := (c.off + r) * c.d
		nulls = c.elem.readRange(w, k*c.n, s, s+cnt)
	}
	if cnt < c.n {
		st := w.st[k*c.n+cnt : (k+1)*c.n]
		for i := range st {
			st[i] = stAbsent
		}
		nulls = true
	}
	return nulls
}

// nullRow makes row k of w d nulls.
func (c fixedListChunk) nullRow(w *work, k int) {
	st := w.st[k*c.d : (k+1)*c.d]
	for i := range st {
		st[i] = stNull
	}
	clear(w.f[k*c.d : (k+1)*c.d])
	clear(w.i[k*c.d : (k+1)*c.d])
}
