package transform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/pages"
)

// A partition column (hive-style key=value folders) has one value per file and no
// column chunk. On the page path it is a constSource: its value, transformed once, on
// every row. (The Arrow path reads it as an array of equal values, like any column.)

// constSource gives one value, the column's ops already applied, to every row.
type constSource struct {
	final work
}

func newConstSource(c *colPlan, a arrow.Array) (*constSource, error) {
	if a.Len() != 1 {
		return nil, fmt.Errorf("constant of %d values, want 1", a.Len())
	}
	if c.src.list || !c.src.sameType(a.DataType()) {
		return nil, fmt.Errorf("constant is %s, compiled for %s", a.DataType(), c.src.typ)
	}
	r, err := newReader(a, 0, c.src.dec)
	if err != nil {
		return nil, err
	}
	s := &constSource{}
	w := &s.final
	w.grow(1, 1)
	w.hash = c.hash
	w.nulls = r.readRange(w, 0, 0, 1)
	for x := range c.ops {
		c.ops[x].run(w, 1)
	}
	return s, nil
}

func (s *constSource) read(w *work, _ []int32, k0, k1 int) (nulls, done bool, err error) {
	f, i, st := s.final.f[0], s.final.i[0], s.final.st[0]
	for k := range k1 - k0 {
		w.f[k], w.i[k], w.st[k] = f, i, st
	}
	return st != stValid, true, nil
}

// ReadsConst says whether column j of the output can be given to ApplyPagesConst as a
// constant of type t.
func (o *Output) ReadsConst(j int, t arrow.DataType) bool {
	return j >= 0 && j < len(o.cols) && o.pad == 0 && !o.cols[j].src.list && o.cols[j].src.sameType(t)
}

// ApplyPagesConst is ApplyPages where column j is consts[j] when that is not nil: an
// array of one value, of a type ReadsConst accepts, that every row has (chunks[j] is
// then ignored).
func (o *Output) ApplyPagesConst(st *PageState, chunks []pages.Chunk, consts []arrow.Array, rows int, sel []int32, dst Dest) error {
	if consts != nil && len(consts) != len(o.cols) {
		return fmt.Errorf("output %q: %d constants given, want %d", o.name, len(consts), len(o.cols))
	}
	return o.applyPages(st, chunks, consts, rows, sel, dst)
}
