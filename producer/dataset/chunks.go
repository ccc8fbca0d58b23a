package dataset

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/shmloader/shmloader/producer/pages"
)

// Leaf is a flat (non-repeated) column as the page decoder reads it: its leaf index in
// the file's schema and what its chunks need to be decoded.
type Leaf struct {
	Index   int
	Type    parquet.Type
	TypeLen int
	MaxDef  int16
	MaxRep  int16
}

// Leaf finds column name (a top-level column, or a field of a struct by its dotted
// path) in f's schema; ok is false when f has no such leaf, or when its footer cannot be
// read again (a Reader of the file reports why).
func (f *File) Leaf(name string) (Leaf, bool) {
	meta, err := f.Footer()
	if err != nil {
		return Leaf{}, false
	}
	i := meta.Schema.ColumnIndexByName(name)
	if i < 0 {
		return Leaf{}, false
	}
	return leafOf(meta.Schema.Column(i), i), true
}

// leafOf is leaf column c, index i in its file's schema.
func leafOf(c *schema.Column, i int) Leaf {
	return Leaf{Index: i, Type: c.PhysicalType(), TypeLen: c.TypeLength(),
		MaxDef: c.MaxDefinitionLevel(), MaxRep: c.MaxRepetitionLevel()}
}

// PagesReadable says whether the page decoder reads leaf l's chunk in row group rg (its
// index in the file), from what the footer says of the chunk's encodings.
func (f *File) PagesReadable(rg int, l Leaf) error {
	meta, err := f.Footer()
	if err != nil {
		return err
	}
	md := meta.RowGroups[rg].Columns[l.Index].MetaData
	if md == nil {
		return kindf(ErrCorrupt, "column chunk %d has no metadata", l.Index)
	}
	enc := make([]parquet.Encoding, len(md.Encodings))
	for i, e := range md.Encodings {
		enc[i] = parquet.Encoding(e)
	}
	return pages.Supported(l.Type, l.MaxRep, enc)
}

// ReadChunks reads the chunks of leaves ls of row group rg (its index in the file) and
// returns one pages.Chunk per leaf, in order, viewing buf (grown as needed and returned
// for reuse). Chunks that lie next to each other in the file are read with one read.
// (Reading them in place from the file mapped into memory was measured slower: 1.25-1.37
// against 1.57-1.64 M rows/s cold, the page faults costing more system time than the
// copy.)
// Each chunk's footer checksum (files of `shmloader gen`) is verified here; the decoder
// checks page CRCs as it reads the pages.
func (r *Reader) ReadChunks(ctx context.Context, rg int, ls []Leaf, buf []byte) ([]pages.Chunk, []byte, error) {
	return r.readChunks(ctx, rg, ls, buf, true)
}

// readChunks is ReadChunks, checking the footer's chunk checksums only when sums.
func (r *Reader) readChunks(ctx context.Context, rg int, ls []Leaf, buf []byte, sums bool) ([]pages.Chunk, []byte, error) {
	meta := r.ft.meta
	if rg < 0 || rg >= len(meta.RowGroups) {
		return nil, buf, &Error{Op: "read", Path: r.file.Path, RowGroup: rg, Err: kindf(ErrRowGroup, "file has %d row groups", len(meta.RowGroups))}
	}
	type span struct{ start, n int64 }
	spans := make([]span, len(ls))
	total := int64(0)
	for i, l := range ls {
		start, n, ok := chunkRange(meta, rg, l.Index)
		if !ok {
			return nil, buf, r.chunkErr(rg, l, kindf(ErrCorrupt, "column chunk has no metadata"))
		}
		spans[i] = span{start, n}
		total += n
	}
	order := make([]int, len(ls))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(spans[a].start - spans[b].start) })
	if int64(cap(buf)) < total {
		buf = make([]byte, total)
	}
	buf = buf[:total]
	// Lay the chunks out in file order; adjacent ones are read together.
	at := make([]int64, len(ls))
	pos := int64(0)
	for k := 0; k < len(order); {
		first := spans[order[k]]
		end, e := first.start+first.n, k+1
		at[order[k]] = pos
		for e < len(order) && spans[order[e]].start == end {
			at[order[e]] = pos + end - first.start
			end += spans[order[e]].n
			e++
		}
		n := end - first.start
		if err := r.obj.ReadAt(ctx, buf[pos:pos+n], first.start); err != nil {
			return nil, buf, &Error{Op: "read", Path: r.file.Path, RowGroup: rg, Err: unwrapStorage(err)}
		}
		r.read += n
		pos += n
		k = e
	}
	out := make([]pages.Chunk, len(ls))
	for i, l := range ls {
		c, err := r.chunk(rg, l, buf[at[i]:at[i]+spans[i].n:at[i]+spans[i].n], spans[i].start, sums)
		if err != nil {
			return nil, buf, err
		}
		out[i] = c
	}
	return out, buf, nil
}

// chunk checks data, leaf l's chunk in row group rg read from offset start, against the
// footer's checksum (when sums), and describes it for the page decoder.
func (r *Reader) chunk(rg int, l Leaf, data []byte, start int64, sums bool) (pages.Chunk, error) {
	meta := r.ft.meta
	if sums {
		if err := r.chunkSum(rg, l, data, start); err != nil {
			return pages.Chunk{}, r.chunkErr(rg, l, err)
		}
	}
	md := meta.RowGroups[rg].Columns[l.Index].MetaData
	c := pages.Chunk{Type: l.Type, TypeLen: l.TypeLen, MaxDef: l.MaxDef, MaxRep: l.MaxRep,
		Codec: compress.Compression(md.Codec), Values: md.NumValues, Uncompressed: md.TotalUncompressedSize, Data: data}
	if st := md.Statistics; st != nil && st.IsSetNullCount() {
		c.NullCount, c.HasNullCount = st.GetNullCount(), true
	}
	return c, nil
}

// chunkSum checks data, leaf l's chunk in row group rg read from offset start, against
// the footer's CRC, if the file has them.
func (r *Reader) chunkSum(rg int, l Leaf, data []byte, start int64) error {
	if r.ft.sums == nil {
		return nil
	}
	return chunkCRC(data, start, r.ft.sums[rg*r.ft.meta.Schema.NumColumns()+l.Index])
}

func (r *Reader) chunkErr(rg int, l Leaf, err error) error {
	return &Error{Op: "read", Path: r.file.Path, RowGroup: rg, Column: r.ft.meta.Schema.Column(l.Index).Path(), Err: err}
}
