package colsrc

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
)

// Arrays reads columns of row groups as Arrow arrays of the dataset's types: flat ones
// (a top-level column, or a field of a struct by its dotted path) by the page decoder
// (BuildArray), partition columns as their file's value, and only nested ones (lists,
// a whole struct) through arrow-go (dataset.Reader.ReadRowGroup). One goroutine uses
// an Arrays; its decoder and buffer are kept from call to call.
type Arrays struct {
	ds  *dataset.Dataset
	dec pages.Decoder
	v   pages.Values
	// got is the chunks loaded since Begin, by leaf index in their file's schema; each
	// Load reads into the next of bufs, which are reused from row group to row group.
	got     map[int]pages.Chunk
	bufs    [][]byte
	next    int
	missing []dataset.Leaf
}

// NewArrays reads the columns of ds.
func NewArrays(ds *dataset.Dataset) *Arrays { return &Arrays{ds: ds} }

// Flat finds column name in file f as the page decoder reads it: ok is false for a
// partition column, a nested one, or one f does not have.
func Flat(ds *dataset.Dataset, f *dataset.File, name string) (l dataset.Leaf, ok bool) {
	if ds.IsPartition(name) {
		return l, false
	}
	l, ok = f.Leaf(name)
	return l, ok && l.MaxRep == 0
}

// Read reads columns names of rg, with r (a Reader of rg's file), and returns one
// Chunked per name, in order; the caller releases them. Their chunks are read together,
// once each (Load), each verified against the footer's checksum.
func (a *Arrays) Read(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, names []string) ([]*arrow.Chunked, error) {
	a.Begin()
	return a.Columns(ctx, r, rg, names)
}

// leaves is the leaves column name reads in rg's file: its own for a flat column, those
// below it for a nested one, none for a partition column.
func (a *Arrays) leaves(r *dataset.Reader, rg dataset.RowGroup, name string) ([]dataset.Leaf, error) {
	if a.ds.IsPartition(name) || rg.Rows == 0 {
		return nil, nil
	}
	if l, ok := Flat(a.ds, rg.File, name); ok {
		return []dataset.Leaf{l}, nil
	}
	ls, err := r.ColumnLeaves(name)
	if err != nil {
		return nil, &dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Column: name, Err: err}
	}
	return ls, nil
}

// Begin starts a row group: the chunks loaded before are let go.
func (a *Arrays) Begin() {
	if a.got == nil {
		a.got = map[int]pages.Chunk{}
	}
	clear(a.got)
	a.next = 0
}

// Load reads the chunks of those leaves ls of rg that were not loaded since Begin, with
// one ReadChunks: each chunk is read once per row group however often it is asked for,
// and right before its first use, while its bytes are still in the CPU's caches (reading
// a whole row group's chunks first measured 4 % more CPU for serve). Chunks stay valid
// until the next Begin.
func (a *Arrays) Load(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, ls []dataset.Leaf) error {
	if a.got == nil {
		a.Begin()
	}
	a.missing = a.missing[:0]
	for _, l := range ls {
		if _, done := a.got[l.Index]; !done && l.Index >= 0 {
			a.got[l.Index] = pages.Chunk{} // once, even if ls names it twice
			a.missing = append(a.missing, l)
		}
	}
	if len(a.missing) == 0 {
		return nil
	}
	if a.next == len(a.bufs) {
		a.bufs = append(a.bufs, nil)
	}
	chunks, buf, err := r.ReadChunks(ctx, rg.Index, a.missing, a.bufs[a.next])
	a.bufs[a.next] = buf
	a.next++
	if err != nil {
		for _, l := range a.missing {
			delete(a.got, l.Index)
		}
		return err
	}
	for i, l := range a.missing {
		a.got[l.Index] = chunks[i]
	}
	return nil
}

// Chunk is leaf l's chunk loaded since Begin (the zero Chunk for a partition column's
// leaf, Index -1); ok is false when none was.
func (a *Arrays) Chunk(l dataset.Leaf) (c pages.Chunk, ok bool) {
	if l.Index < 0 {
		return pages.Chunk{}, true
	}
	c, ok = a.got[l.Index]
	return c, ok
}

// Columns makes columns names of rg into arrays from their chunks, loading those not
// loaded since Begin (Load): flat ones by the page decoder, nested ones through arrow-go
// (dataset.Reader.DecodeColumn), partition columns as their file's value. The caller
// releases the result.
func (a *Arrays) Columns(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, names []string) ([]*arrow.Chunked, error) {
	var ls []dataset.Leaf
	for _, n := range names {
		l, err := a.leaves(r, rg, n)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l...)
	}
	if err := a.Load(ctx, r, rg, ls); err != nil {
		return nil, err
	}
	out := make([]*arrow.Chunked, len(names))
	fail := func(err error) ([]*arrow.Chunked, error) {
		for _, c := range out {
			if c != nil {
				c.Release()
			}
		}
		return nil, err
	}
	for i, n := range names {
		if err := ctx.Err(); err != nil {
			return fail(&dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Err: err})
		}
		if c, ok, err := a.ds.Constant(rg.File, n, int(rg.Rows)); ok {
			if err != nil {
				return fail(&dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Column: n, Err: err})
			}
			out[i] = arrow.NewChunked(c.DataType(), []arrow.Array{c})
			c.Release()
			continue
		}
		ls, err := a.leaves(r, rg, n)
		if err != nil {
			return fail(err)
		}
		chunks := make([]pages.Chunk, len(ls))
		for k, l := range ls {
			c, ok := a.Chunk(l)
			if !ok {
				return fail(&dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Column: n,
					Err: errors.New("its chunks were not loaded")})
			}
			chunks[k] = c
		}
		var col *arrow.Chunked
		if l, flat := Flat(a.ds, rg.File, n); flat && rg.Rows > 0 {
			c, _ := a.Chunk(l)
			col, err = a.Build(rg, n, c)
		} else {
			col, err = r.DecodeColumn(ctx, rg.Index, n, chunks)
			for k, l := range ls { // DecodeColumn may have dropped empty pages in place
				a.got[l.Index] = chunks[k]
			}
		}
		if err != nil {
			return fail(err)
		}
		out[i] = col
	}
	return out, nil
}

// Build decodes chunk c of flat column name of rg into an array of the column's type
// in the dataset; an error names rg's file, row group and the column.
func (a *Arrays) Build(rg dataset.RowGroup, name string, c pages.Chunk) (*arrow.Chunked, error) {
	f, ok := a.ds.Field(name)
	if !ok {
		return nil, &dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Column: name, Err: dataset.ErrNoColumn}
	}
	col, err := BuildArray(&a.dec, &a.v, c, f.Type, int(rg.Rows))
	if err != nil {
		var de *dataset.Error
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, &dataset.Error{Op: "decode", Path: rg.File.Path, RowGroup: rg.Index, Column: name, Err: err}
	}
	return col, nil
}
