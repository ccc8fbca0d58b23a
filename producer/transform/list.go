package transform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
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
