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
	buf []byte
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
// Chunked per name, in order; the caller releases them. The flat columns' chunks are
// read together (ReadChunks), each verified against the footer's checksum.
func (a *Arrays) Read(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, names []string) ([]*arrow.Chunked, error) {
	out := make([]*arrow.Chunked, len(names))
	fail := func(err error) ([]*arrow.Chunked, error) {
		for _, c := range out {
			if c != nil {
				c.Release()
			}
		}
		return nil, err
	}
	var flat []dataset.Leaf
	var at []int // index in names of each flat leaf
	var nested []string
	for i, n := range names {
		if c, ok, err := a.ds.Constant(rg.File, n, int(rg.Rows)); ok {
			if err != nil {
				return fail(&dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Column: n, Err: err})
			}
			out[i] = arrow.NewChunked(c.DataType(), []arrow.Array{c})
			c.Release()
			continue
		}
		if l, ok := Flat(a.ds, rg.File, n); ok {
			flat, at = append(flat, l), append(at, i)
			continue
		}
		nested = append(nested, n)
	}
	if len(flat) > 0 {
		chunks, buf, err := r.ReadChunks(rg.Index, flat, a.buf)
		a.buf = buf
		if err != nil {
			return fail(err)
		}
		for k, c := range chunks {
			if err := ctx.Err(); err != nil {
				return fail(&dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index, Err: err})
			}
			col, err := a.Build(rg, names[at[k]], c)
			if err != nil {
				return fail(err)
			}
			out[at[k]] = col
		}
	}
	if len(nested) > 0 {
		cols, err := r.ReadRowGroup(ctx, rg.Index, nested)
		if err != nil {
			return fail(err)
		}
		k := 0
		for i := range out {
			if out[i] == nil {
				out[i] = cols[k]
				k++
			}
		}
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
