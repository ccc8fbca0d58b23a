package dataset

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/producer/dataset/pqdamage"
	"github.com/shmloader/shmloader/producer/internal/thrift"
	"github.com/shmloader/shmloader/producer/pages"
)

// A file with a data page whose definition levels hold one level more, or one fewer,
// than the page header's num_values is refused by the page decoder, with the page named;
// the rows of the pages before it are served, none of it. (arrow-go's reader, given the
// file with one level more, returns its 300 rows with 61 nulls: the page's values moved
// down a row, its last one lost.)
func TestLevelCountsDisagree(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 300 {
		if i%50 < 10 { // each page of 50 rows: a run of 10 nulls, then 40 values
			b.AppendNull()
		} else {
			b.Append(int64(i))
		}
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{col}, 300)
	defer rec.Release()
	for _, v2 := range []bool{false, true} {
		for _, part := range []pqdamage.Part{pqdamage.MoreLevels, pqdamage.FewerLevels} {
			name := fmt.Sprintf("v2=%v/%s", v2, part)
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "a.parquet")
				o := writeOpts{props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false),
					parquet.WithBatchSize(50), parquet.WithDataPageSize(100)}}
				if v2 {
					o.codec = compress.Codecs.Snappy // v2 levels are stored uncompressed all the same
					o.props = append(o.props, parquet.WithDataPageVersion(parquet.DataPageV2))
				}
				writeRecord(t, path, rec, o)
				const page = 2
				w, err := pqdamage.Page(path, 0, "x", page, part)
				if err != nil {
					t.Fatal(err)
				}
				chunk := leafChunk(t, path, "x")
				var dec pages.Decoder
				if err := dec.Reset(chunk); err != nil {
					t.Fatal(err)
				}
				var v pages.Values
				served := 0
				for err == nil && served < 300 {
					var n int
					n, err = dec.Read(1000, &v)
					served += n
				}
				want := "definition levels: a repeated run holds 1 more than the page's 50 values"
				if part == pqdamage.FewerLevels {
					want = "definition levels: values run out"
				}
				var pe *pages.Error
				if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) || pe.Page != page || int64(pe.Offset) != w.Offset-w.ChunkStart ||
					!strings.Contains(err.Error(), want) {
					t.Fatalf("%v, want ErrCorrupt naming page %d at chunk offset %d and saying %q", err, page, w.Offset-w.ChunkStart, want)
				}
				if served != page*50 {
					t.Fatalf("%d rows served, want the %d of the pages before page %d", served, page*50, page)
				}
				if err := pages.Check(chunk); !errors.As(err, &pe) || pe.Page != page {
					t.Fatalf("Check: %v, want page %d named", err, page)
				}
			})
		}
	}
}

// A chunk whose definition levels contradict the null_count of its footer statistics is
// refused once it is read (the chunk is at fault, not a page); the same file with the
// footer's count right reads.
func TestFooterNullCountContradicted(t *testing.T) {
	for _, delta := range []int64{0, 1, -1} {
		path := writeTest(t, t.TempDir(), "a.parquet", 0, 200, writeOpts{})
		rewriteFooter(t, path, func(root *thrift.Value) {
			md := &root.Field(4).Value.Items[0].Field(1).Value.Items[1].Field(3).Value // row group 0, column b
			nc := md.Field(12).Value.Field(3)
			nc.Value.Raw = zigzag64(unzigzag(nc.Value.Raw) + delta)
		}, nil)
		chunk := leafChunk(t, path, "b")
		if !chunk.HasNullCount || chunk.NullCount != 29+delta { // rows i%7 == 3 of 0..199
			t.Fatalf("delta %d: the chunk's null count %d (set %v)", delta, chunk.NullCount, chunk.HasNullCount)
		}
		err := pages.Check(chunk)
		var pe *pages.Error
		switch {
		case delta == 0 && err != nil:
			t.Fatalf("the footer as written: %v", err)
		case delta != 0 && (!errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) || pe.Page != -1 ||
			!strings.Contains(err.Error(), fmt.Sprintf("the definition levels give 29 nulls, the footer's statistics %d", 29+delta))):
			t.Fatalf("footer null count off by %d: %v", delta, err)
		}
	}
}

// leafChunk is the chunk of flat column name in row group 0 of the file at path, as the
// page decoder gets it, which must read it (pages.Supported).
func leafChunk(t *testing.T, path, name string) pages.Chunk {
	t.Helper()
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	leaf, ok := d.Files[0].Leaf(name)
	if !ok {
		t.Fatalf("no leaf %s", name)
	}
	if err := d.Files[0].PagesReadable(0, leaf); err != nil {
		t.Fatal(err)
	}
	chunks, _, err := r.ReadChunks(context.Background(), 0, []Leaf{leaf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return chunks[0]
}
