package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/colsrc"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
)

// verifyWorker is one goroutine of a Verifier's Run: its files, decoders and what it
// has checked and found.
type verifyWorker struct {
	v        *Verifier
	ctx      context.Context
	readers  *readers
	pw       *colsrc.Worker // with a config: the outputs read from pages
	arrays   *colsrc.Arrays // builds flat columns' arrays
	buf      []byte         // a flat column's chunk
	unopened *sync.Map
	p        *VerifyProgress
	rep      VerifyReport // counts only
	found    []finding
}

// noRows selects no row: the page path still decodes and checks every page of the
// chunks (ApplyRuns reads every run), but nothing is transformed or written.
var noRows = []int32{}

// rgCheck is the checking of one row group.
type rgCheck struct {
	*verifyWorker
	r       *dataset.Reader
	rg      dataset.RowGroup
	counted map[string]bool // columns whose chunks were counted
	bad     map[string]bool // columns found damaged: one finding each
	whole   map[string]bool // columns read whole (columnRoad)
}

// rowGroup checks rg and reports whether it got through all of it: its file could be
// opened, and ctx was not cancelled.
func (w *verifyWorker) rowGroup(rg dataset.RowGroup) bool {
	if rg.Rows == 0 {
		return true // nothing to read: serve skips such row groups
	}
	r, err := w.readers.get(rg.File)
	if err != nil {
		if _, seen := w.unopened.LoadOrStore(rg.File, true); !seen && w.ctx.Err() == nil {
			w.add(rg, "", err)
		}
		return false
	}
	c := &rgCheck{verifyWorker: w, r: r, rg: rg, counted: map[string]bool{}, bad: map[string]bool{}, whole: map[string]bool{}}
	if w.v.src == nil {
		c.everyRoad()
	} else {
		c.asDecoded()
	}
	return w.ctx.Err() == nil
}

// everyRoad checks every column by the road serve reads it by as a whole column: a flat
// one decoded page by page into its array (the page path's checks, down to each value,
// and the values arrow-go refuses, which both of serve's roads for it refuse), a nested
// one through arrow-go.
func (c *rgCheck) everyRoad() {
	for _, name := range c.v.columns {
		if c.ctx.Err() != nil {
			return
		}
		c.columnRoad(name)
	}
}

// asDecoded checks the row group as decode reads it: the filter's statistics (mayMatch),
// the outputs planned for the page path through it, then the columns decode reads as
// arrays.
func (c *rgCheck) asDecoded() {
	s := c.v.src
	if s.filtering() {
		if _, err := s.mayMatch(c.rg); err != nil {
			c.add(c.rg, "", err)
		}
	}
	plan := c.pw.Plan(c.rg)
	for o, ls := range plan {
		if ls == nil || c.ctx.Err() != nil {
			continue
		}
		chunks, err := c.pw.ReadChunks(c.ctx, c.r, c.rg, ls)
		if err == nil {
			for j, l := range ls {
				if l.Index >= 0 {
					c.count(s.columns[s.outCols[o][j]], chunks[j].Data)
				}
			}
			err = c.pw.ApplyChunks(c.rg, o, chunks, noRows, c.v.dests[o])
		}
		if err != nil && c.ctx.Err() == nil {
			c.narrow(o, ls, err)
		}
	}
	for i, need := range s.arrayColumns(plan) {
		name := s.columns[i]
		if need && !c.bad[name] && !c.whole[name] && !c.v.ds.IsPartition(name) && c.ctx.Err() == nil {
			c.columnRoad(name)
		}
	}
}

// narrow finds which columns of output o made its page path fail with err, each one
// read whole, and reports err itself when none is found damaged.
func (c *rgCheck) narrow(o int, ls []dataset.Leaf, err error) {
	s := c.v.src
	found := false
	for j, l := range ls {
		name := s.columns[s.outCols[o][j]]
		if l.Index < 0 {
			continue
		}
		if !c.bad[name] && !c.whole[name] {
			c.columnRoad(name)
		}
		found = found || c.bad[name]
		if c.ctx.Err() != nil {
			return
		}
	}
	if !found {
		c.add(c.rg, "", s.decodeErr(c.rg, err))
	}
}

// columnRoad reads column name whole, as decode reads the filter's columns and the
// outputs not read from pages.
func (c *rgCheck) columnRoad(name string) {
	c.whole[name] = true
	if l, ok := colsrc.Flat(c.v.ds, c.rg.File, name); ok {
		c.flatRoad(name, l)
	} else {
		c.nestedRoad(name)
	}
}

// flatRoad reads leaf l, flat column name's chunk, and decodes it into the array of
// the column's type, or, for a type no road of serve builds, walks its pages with the
// page decoder's checks.
func (c *rgCheck) flatRoad(name string, l dataset.Leaf) {
	chunks, buf, err := c.r.ReadChunks(c.ctx, c.rg.Index, []dataset.Leaf{l}, c.buf)
	c.buf = buf
	if err != nil {
		c.count(name, nil)
		c.damaged(name, err)
		return
	}
	c.count(name, chunks[0].Data)
	if f, _ := c.v.ds.Field(name); f.Type == nil || !colsrc.Builds(f.Type, l.Type, l.TypeLen) {
		if err := pages.Check(chunks[0]); err != nil {
			c.damaged(name, &dataset.Error{Op: "decode", Path: c.rg.File.Path, RowGroup: c.rg.Index, Column: name, Err: err})
		}
		return
	}
	col, err := c.arrays.Build(c.rg, name, chunks[0])
	if err != nil {
		c.damaged(name, err)
		return
	}
	col.Release()
}

// nestedRoad reads column name (a list, a whole struct) through arrow-go.
func (c *rgCheck) nestedRoad(name string) {
	before := c.r.Checked()
	cols, err := c.r.ReadRowGroup(c.ctx, c.rg.Index, []string{name})
	release(cols)
	if !c.counted[name] {
		c.counted[name] = true
		after := c.r.Checked()
		c.tally(after.Chunks-before.Chunks, after.Pages-before.Pages, after.CRCPages-before.CRCPages, after.Bytes-before.Bytes)
	}
	if err != nil {
		c.damaged(name, err)
	}
}

// count counts column name's chunk, data as stored (nil: it could not be read, and its
// size is the footer's), once per row group.
func (c *rgCheck) count(name string, data []byte) {
	if c.counted[name] {
		return
	}
	c.counted[name] = true
	n, crcs, size := int64(0), int64(0), int64(len(data))
	for pos := 0; pos < len(data); n++ {
		h, err := pages.ParseHeader(data[pos:])
		if err != nil {
			n++ // the page at fault
			break
		}
		if h.HasCRC {
			crcs++
		}
		pos += h.Size + h.Compressed
	}
	if data == nil {
		if meta, err := c.rg.File.Footer(); err == nil {
			if l, ok := c.rg.File.Leaf(name); ok {
				if cc := meta.RowGroups[c.rg.Index].Columns[l.Index]; cc != nil && cc.MetaData != nil {
					size = cc.MetaData.TotalCompressedSize
				}
			}
		}
	}
	c.tally(1, n, crcs, size)
}

// tally counts checked chunks, their pages and bytes, and the pages no CRC covers:
// neither their own nor, in files of `shmloader gen`, their chunk's in the footer.
func (c *rgCheck) tally(chunks, pages, crcPages, bytes int64) {
	c.rep.Chunks += chunks
	c.rep.Pages += pages
	if !c.rg.File.ChunkSums {
		c.rep.Uncovered += pages - crcPages
	}
	c.rep.Bytes += bytes
	c.p.Bytes.Add(bytes)
}

// damaged records err, the failure of column name's chunk, unless it is only the run
// being stopped; where err does not name the page (a chunk checksum mismatch, a header
// arrow-go's reader refused), the page checks are asked which one it is.
func (c *rgCheck) damaged(name string, err error) {
	if c.ctx.Err() != nil {
		return
	}
	c.bad[name] = true
	c.add(c.rg, name, c.locate(name, err))
}

func (c *rgCheck) locate(name string, err error) error {
	var pe *pages.Error
	if errors.As(err, &pe) && pe.Page >= 0 || !errors.Is(err, dataset.ErrCorrupt) && !errors.Is(err, dataset.ErrChecksum) {
		return err
	}
	var de, at *dataset.Error
	loc := c.r.LocatePage(c.rg.Index, name)
	switch {
	case !errors.As(err, &de):
		return err
	case !errors.As(loc, &at):
		if errors.Is(err, dataset.ErrChecksum) && loc == nil {
			return &dataset.Error{Op: de.Op, Path: de.Path, RowGroup: de.RowGroup, Column: name,
				Err: fmt.Errorf("%w; every page passes the page checks, so the damage is in bytes of values that only this checksum covers, in a page it cannot tell", de.Err)}
		}
		return err
	case errors.Is(err, dataset.ErrChecksum):
		return &dataset.Error{Op: at.Op, Path: at.Path, RowGroup: at.RowGroup, Column: name, Err: fmt.Errorf("%w; %w", at.Err, de.Err)}
	}
	return &dataset.Error{Op: at.Op, Path: at.Path, RowGroup: at.RowGroup, Column: name, Err: at.Err}
}

// add records err about column name ("": no one column) of rg.
func (w *verifyWorker) add(rg dataset.RowGroup, name string, err error) {
	var de *dataset.Error
	if !errors.As(err, &de) {
		de = &dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Column: name, Err: err}
	}
	if name == "" {
		name = de.Column
	}
	col, ok := w.v.order[name]
	if !ok {
		col = -1
	}
	w.found = append(w.found, finding{g: rg.Global, col: col, err: de})
	w.p.Damaged.Add(1)
}

func isStruct(t arrow.DataType) bool { return t != nil && t.ID() == arrow.STRUCT }
