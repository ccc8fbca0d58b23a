package dataset

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/storage"
)

// testSchema: a int64, b float32 (nulls), s string (nulls), l list<int64> (nulls).
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Int64},
	{Name: "b", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

// testRecord holds rows first..first+n-1 of the test schema; every value derives from
// the row number, so tests can recompute them.
func testRecord(first, n int64) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	a := array.NewInt64Builder(mem)
	b := array.NewFloat32Builder(mem)
	s := array.NewStringBuilder(mem)
	l := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	lv := l.ValueBuilder().(*array.Int64Builder)
	for _, bld := range []array.Builder{a, b, s, l} {
		defer bld.Release()
	}
	for i := first; i < first+n; i++ {
		a.Append(i)
		if i%7 == 3 {
			b.AppendNull()
		} else {
			b.Append(float32(i) * 0.5)
		}
		if i%5 == 1 {
			s.AppendNull()
		} else {
			s.Append(fmt.Sprintf("s%02d", i%13))
		}
		if i%11 == 4 {
			l.AppendNull()
		} else {
			l.Append(true)
			for k := int64(0); k < i%3; k++ {
				lv.Append(i + k)
			}
		}
	}
	arrs := []arrow.Array{a.NewArray(), b.NewArray(), s.NewArray(), l.NewArray()}
	defer func() {
		for _, x := range arrs {
			x.Release()
		}
	}()
	return array.NewRecordBatch(testSchema, arrs, n)
}

type writeOpts struct {
	rgRows    int64
	codec     compress.Compression
	checksums bool // add the ChecksumKey footer entry, as `shmloader gen` does
	kv        map[string]string
	props     []parquet.WriterProperty // more writer properties, after the above
}

// writeRecord writes rec to path in row groups of o.rgRows rows.
func writeRecord(t testing.TB, path string, rec arrow.RecordBatch, o writeOpts) {
	t.Helper()
	if o.rgRows == 0 {
		o.rgRows = rec.NumRows() + 1
	}
	footer := func(fw *pqarrow.FileWriter, written io.ReaderAt) error {
		if o.checksums {
			meta, err := fw.FileMetadata()
			if err != nil {
				return err
			}
			sums, err := ChunkChecksums(written, meta)
			if err != nil {
				return err
			}
			if err := fw.AppendKeyValueMetadata(ChecksumKey, sums); err != nil {
				return err
			}
		}
		for k, v := range o.kv {
			if err := fw.AppendKeyValueMetadata(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	pages.RegisterCodecs() // o.codec may be LZ4
	testkit.WriteParquet(t, path, rec, testkit.Parquet{
		Props:       append([]parquet.WriterProperty{parquet.WithCompression(o.codec), parquet.WithMaxRowGroupLength(o.rgRows)}, o.props...),
		BeforeClose: footer,
	})
}

// writeTest writes rows first..first+n-1 of the test schema to dir/name.
func writeTest(t testing.TB, dir, name string, first, n int64, o writeOpts) string {
	t.Helper()
	rec := testRecord(first, n)
	defer rec.Release()
	path := filepath.Join(dir, name)
	writeRecord(t, path, rec, o)
	return path
}

// readAll reads the given columns of every row group of d, one Reader per file.
func readAll(t testing.TB, d *Dataset, columns []string) [][]*arrow.Chunked {
	t.Helper()
	var out [][]*arrow.Chunked
	for _, f := range d.Files {
		r, err := d.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range footerOf(t, f).RowGroups {
			cols, err := r.ReadRowGroup(context.Background(), i, columns)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, cols)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func release(groups [][]*arrow.Chunked) {
	for _, g := range groups {
		for _, c := range g {
			c.Release()
		}
	}
}

// readLocal reads the footer of the local file at path, as a File on its own.
func readLocal(path string) (*File, error) {
	st := storage.Local{}
	o, err := st.Stat(context.Background(), path)
	if err != nil {
		return nil, fromStorage(err)
	}
	return readFile(context.Background(), st, o, 0)
}
