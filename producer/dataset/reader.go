package dataset

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/storage"
)

// Reader decodes row groups of one file into Arrow arrays. A Reader is used by one
// goroutine at a time; open one Reader per goroutine to read a file concurrently.
type Reader struct {
	ds      *Dataset
	file    *File
	ft      *footer        // the file's footer, kept while the Reader is open
	obj     storage.Reader // the file: every byte this Reader reads comes from ReadChunks
	read    int64          // bytes read from obj, for tests
	img     *chunkImage    // what arrow-go reads: the chunks of the column it decodes
	buf     []byte         // ReadRowGroup's chunks, reused
	checked Checked
	ar      *pqarrow.FileReader
	fields  map[string]int // top-level name -> field index in this file's schema
}

// OpenReader opens f for reading, with its footer as the dataset keeps it or read again
// (File.Footer).
func (d *Dataset) OpenReader(f *File) (r *Reader, err error) {
	fail := func(err error) (*Reader, error) {
		return nil, &Error{Op: "open", Path: f.Path, RowGroup: -1, Err: err}
	}
	ft, err := f.footer()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	obj, err := d.store.Open(ctx, f.obj)
	if err != nil {
		return nil, fromStorage(err)
	}
	img := &chunkImage{size: f.Size}
	defer func() {
		if r == nil {
			obj.Close()
		}
	}()
	props := parquet.NewReaderProperties(pool)
	props.BufferedStreamEnabled = false // one ReadAt per chunk: see chunkImage
	ar, err := newReader(img, ft.meta, props)
	if err != nil {
		return fail(err)
	}
	fields := make(map[string]int, len(ar.Manifest.Fields))
	for i, sf := range ar.Manifest.Fields {
		fields[sf.Field.Name] = i
	}
	return &Reader{ds: d, file: f, ft: ft, obj: obj, img: img, ar: ar, fields: fields}, nil
}

func newReader(src *chunkImage, meta *metadata.FileMetaData, props *parquet.ReaderProperties) (ar *pqarrow.FileReader, err error) {
	defer recovered(&err)
	pages.RegisterCodecs()
	pf, err := file.NewParquetReader(src, file.WithMetadata(meta), file.WithReadProps(props))
	if err != nil {
		return nil, err
	}
	// Parallel stays off: chunkImage holds one column's chunks at a time.
	return pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, pool)
}

// File is the file this Reader reads.
func (r *Reader) File() *File { return r.file }

// ReadRowGroup decodes the given columns of row group index (its index within the file,
// RowGroup.Index) and returns one Chunked per column in the order asked, of the
// dataset's type for that column (Dataset.Field): a top-level column, a field of a
// struct by its dotted path, or a partition column (its file's value on every row).
// Only those columns' chunks are read; a list column reads its leaf, a struct's field
// the leaves below it. The caller releases the result. Every chunk is verified against
// the checksums the file has before it is decoded.
func (r *Reader) ReadRowGroup(ctx context.Context, index int, columns []string) ([]*arrow.Chunked, error) {
	meta := r.ft.meta
	if index < 0 || index >= len(meta.RowGroups) {
		return nil, &Error{Op: "read", Path: r.file.Path, RowGroup: index, Err: kindf(ErrRowGroup, "file has %d row groups", len(meta.RowGroups))}
	}
	out := make([]*arrow.Chunked, 0, len(columns))
	release := func() {
		for _, c := range out {
			c.Release()
		}
	}
	for _, name := range columns {
		if err := ctx.Err(); err != nil {
			release()
			return nil, &Error{Op: "read", Path: r.file.Path, RowGroup: index, Err: err}
		}
		col, err := r.readColumn(ctx, index, name)
		if err != nil {
			release()
			return nil, &Error{Op: "read", Path: r.file.Path, RowGroup: index, Column: name, Err: err}
		}
		out = append(out, col)
	}
	return out, nil
}

func (r *Reader) readColumn(ctx context.Context, rg int, name string) (*arrow.Chunked, error) {
	if r.ds.IsPartition(name) || r.ft.meta.RowGroups[rg].NumRows == 0 {
		return r.decodeColumn(ctx, rg, name, nil, false)
	}
	ls, err := r.ColumnLeaves(name)
	if err != nil {
		return nil, err
	}
	chunks, buf, err := r.readChunks(ctx, rg, ls, r.buf, false) // decodeColumn checks them
	r.buf = buf
	if err != nil {
		var de *Error
		if errors.As(err, &de) { // ReadRowGroup names the file, row group and column
			err = inLeaf(name, de.Column, de.Err)
		}
		return nil, err
	}
	return r.decodeColumn(ctx, rg, name, chunks, true)
}

// ColumnLeaves is the leaves column name (as ReadRowGroup names columns) reads in this
// file, in schema order: one for a flat column, those below it for a list or a struct;
// none for a partition column.
func (r *Reader) ColumnLeaves(name string) ([]Leaf, error) {
	if r.ds.IsPartition(name) {
		return nil, nil
	}
	fi, names, ok := r.field(name)
	if !ok {
		return nil, ErrNoColumn
	}
	leaves, ok := r.leaves(fi, names)
	if !ok {
		return nil, ErrNoColumn
	}
	return r.leafList(leaves), nil
}

// DecodeColumn decodes column name of row group rg (its index in the file) through
// arrow-go from chunks, its leaves' chunks as ReadChunks read them (ColumnLeaves'
// order), into the dataset's type for it, as ReadRowGroup does. Each chunk is checked
// first (every page's CRC, header and sizes; ReadChunks checked the footer's CRC), and
// its pages of no values are dropped in place. The caller releases the result.
func (r *Reader) DecodeColumn(ctx context.Context, rg int, name string, chunks []pages.Chunk) (*arrow.Chunked, error) {
	if rg < 0 || rg >= len(r.ft.meta.RowGroups) {
		return nil, &Error{Op: "read", Path: r.file.Path, RowGroup: rg, Err: kindf(ErrRowGroup, "file has %d row groups", len(r.ft.meta.RowGroups))}
	}
	col, err := r.decodeColumn(ctx, rg, name, chunks, false)
	if err != nil {
		return nil, &Error{Op: "read", Path: r.file.Path, RowGroup: rg, Column: name, Err: err}
	}
	return col, nil
}

// decodeColumn is DecodeColumn; sums: the chunks' footer CRCs are still to be checked
// (ReadChunks has checked them).
func (r *Reader) decodeColumn(ctx context.Context, rg int, name string, chunks []pages.Chunk, sums bool) (*arrow.Chunked, error) {
	want, ok := r.ds.Field(name)
	if !ok {
		return nil, ErrNoColumn
	}
	rows := r.ft.meta.RowGroups[rg].NumRows
	if a, ok, err := r.ds.Constant(r.file, name, int(rows)); ok {
		if err != nil {
			return nil, err
		}
		defer a.Release()
		return arrow.NewChunked(a.DataType(), []arrow.Array{a}), nil
	}
	fi, names, ok := r.field(name)
	if !ok {
		return nil, ErrNoColumn
	}
	if rows == 0 {
		// Nothing to decode, and arrow-go writes such chunks with no valid offset.
		b := array.NewBuilder(pool, want.Type)
		defer b.Release()
		a := b.NewArray()
		defer a.Release()
		return arrow.NewChunked(a.DataType(), []arrow.Array{a}), nil
	}
	leaves, ok := r.leaves(fi, names)
	if !ok {
		return nil, ErrNoColumn
	}
	ls := r.leafList(leaves)
	if len(chunks) != len(ls) {
		return nil, fmt.Errorf("%d chunks given for the column's %d leaves", len(chunks), len(ls))
	}
	if err := r.checkLeaves(rg, name, ls, chunks, sums); err != nil {
		return nil, err
	}
	col, err := r.decode(ctx, fi, leaves, rg)
	if err != nil {
		if diag := r.diagnose(ls, chunks); diag != nil {
			err = diag
		}
	}
	if err == nil && int64(col.Len()) != rows {
		err = kindf(ErrCorrupt, "decoded %d rows, the footer says %d", col.Len(), rows)
	}
	for _, n := range names[1:] {
		if err != nil {
			break
		}
		var child *arrow.Chunked
		child, err = structChild(col, n)
		col.Release()
		col = child
	}
	if err == nil {
		var conv *arrow.Chunked
		if conv, err = conformChunked(col, want.Type); err == nil {
			col.Release()
			col = conv
		}
	}
	if err != nil {
		if col != nil {
			col.Release()
		}
		return nil, err
	}
	return col, nil
}

// field finds column name (Dataset.Field) in this file: the index of its top-level field
// in the file's schema, and the names of the path from there down to the column.
func (r *Reader) field(name string) (int, []string, bool) {
	path, ok := lookupPath(r.ds.Schema.Fields(), name)
	if !ok {
		return 0, nil, false
	}
	names := pathNames(r.ds.Schema.Fields(), path)
	fi, ok := r.fields[names[0]]
	return fi, names, ok
}

// leaves is the leaf columns (indices in the file's schema) below the path names[1:] of
// top-level field fi: the column chunks that reading the column reads.
func (r *Reader) leaves(fi int, names []string) (map[int]bool, bool) {
	sf := &r.ar.Manifest.Fields[fi]
	for _, n := range names[1:] {
		if sf = childNamed(sf, n); sf == nil {
			return nil, false
		}
	}
	leaves := map[int]bool{}
	collectLeaves(sf, leaves)
	return leaves, true
}

// childNamed is the child of f named name, nil if none.
func childNamed(f *pqarrow.SchemaField, name string) *pqarrow.SchemaField {
	for i := range f.Children {
		if f.Children[i].Field.Name == name {
			return &f.Children[i]
		}
	}
	return nil
}

func (r *Reader) decode(ctx context.Context, fi int, leaves map[int]bool, rg int) (col *arrow.Chunked, err error) {
	defer recovered(&err)
	cr, err := r.ar.GetFieldReader(ctx, fi, leaves, []int{rg})
	if err == nil {
		defer cr.Release()
		col, err = r.ar.ReadColumn([]int{rg}, cr)
	}
	if err != nil {
		return nil, kindf(ErrCorrupt, "%v", err)
	}
	return col, nil
}

func collectLeaves(f *pqarrow.SchemaField, leaves map[int]bool) {
	if f.IsLeaf() {
		leaves[f.ColIndex] = true
	}
	for i := range f.Children {
		collectLeaves(&f.Children[i], leaves)
	}
}

// checkLeaves checks chunks, leaves ls's in row group rg (checkChunk), and puts them in
// r.img for arrow-go; a chunk whose empty pages checkChunk dropped is shortened in place.
func (r *Reader) checkLeaves(rg int, name string, ls []Leaf, chunks []pages.Chunk, sums bool) error {
	schema := r.ft.meta.Schema
	r.img.chunks = r.img.chunks[:0]
	for i, c := range chunks {
		start, size, _ := chunkRange(r.ft.meta, rg, ls[i].Index)
		if int64(len(c.Data)) > size {
			return fmt.Errorf("leaf %s: a chunk of %d bytes given, the footer says %d", schema.Column(ls[i].Index).Path(), len(c.Data), size)
		}
		n, err := r.checkChunk(rg, ls[i], c, start, sums)
		if err != nil {
			return inLeaf(name, schema.Column(ls[i].Index).Path(), err)
		}
		chunks[i].Data = c.Data[:n]
		r.img.chunks = append(r.img.chunks, imageChunk{start: start, size: size, data: chunks[i].Data})
	}
	return nil
}

// leafList is leaves in schema order.
func (r *Reader) leafList(leaves map[int]bool) []Leaf {
	schema := r.ft.meta.Schema
	ls := make([]Leaf, 0, len(leaves))
	for i := range schema.NumColumns() {
		if leaves[i] {
			ls = append(ls, leafOf(schema.Column(i), i))
		}
	}
	return ls
}

// inLeaf names leaf in err, about column name, when the leaf is not the column itself.
func inLeaf(name, leaf string, err error) error {
	if leaf == "" || leaf == name {
		return err
	}
	return leafError{path: leaf, err: err}
}

// Close closes the file.
func (r *Reader) Close() error {
	if err := r.obj.Close(); err != nil {
		return &Error{Op: "close", Path: r.file.Path, RowGroup: -1, Err: unwrapStorage(err)}
	}
	return nil
}
