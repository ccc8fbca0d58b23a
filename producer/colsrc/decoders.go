package colsrc

import (
	"fmt"

	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/transform"
)

// Decoders is one goroutine's page decoders for one output, one per column, kept from
// row group to row group so that the steady state allocates nothing.
type Decoders struct {
	state  transform.RunState
	pages  []pageRuns
	consts []constRuns
	cols   []transform.Column
}

// Apply writes rows sel (nil: all) of a row group of rows rows of out into dst, column
// j from the pages of chunks[j], or, where consts[j] is not nil, that constant on every
// row (chunks[j] is then ignored). No Arrow array is built. All of each chunk is
// decoded and checked (Decoder.Finish), selected rows or not.
func (d *Decoders) Apply(out *transform.Output, chunks []pages.Chunk, consts []*Const, rows int, sel []int32, dst transform.Dest) error {
	if n := out.NumColumns(); len(chunks) != n || consts != nil && len(consts) != n {
		return fmt.Errorf("output %q: %d chunks and %d constants given, want %d", out.Name(), len(chunks), len(consts), n)
	}
	if len(d.pages) < len(chunks) {
		d.pages, d.consts = make([]pageRuns, len(chunks)), make([]constRuns, len(chunks))
	}
	d.cols = d.cols[:0]
	for j, c := range chunks {
		if consts != nil && consts[j] != nil {
			r := &d.consts[j]
			r.set(consts[j])
			d.cols = append(d.cols, transform.Column{Runs: r, Kind: consts[j].kind})
			continue
		}
		k := Kind(out.ColumnType(j), c.Type, c.TypeLen)
		if !out.ReadsValues(j, k) {
			return fmt.Errorf("output %q, column %q: cannot read %s pages of width %d as %s", out.Name(), out.Columns()[j], c.Type, c.TypeLen, out.ColumnType(j))
		}
		p := &d.pages[j]
		if err := p.reset(c, k); err != nil {
			return fmt.Errorf("output %q, column %q: %w", out.Name(), out.Columns()[j], err)
		}
		d.cols = append(d.cols, transform.Column{Runs: p, Kind: k})
	}
	if err := out.ApplyRuns(&d.state, d.cols, rows, sel, dst); err != nil {
		return err
	}
	for j := range chunks {
		if consts != nil && consts[j] != nil {
			continue
		}
		if err := d.pages[j].dec.Finish(); err != nil {
			return fmt.Errorf("output %q, column %q: %w", out.Name(), out.Columns()[j], err)
		}
	}
	return nil
}
