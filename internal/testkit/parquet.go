package testkit

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Parquet says how WriteParquet and ParquetBytes write; the zero value is arrow-go's
// defaults.
type Parquet struct {
	Props []parquet.WriterProperty // the file writer's, such as row group length and codec
	Arrow []pqarrow.WriterOption   // pqarrow's, such as WithStoreSchema
	// BeforeClose, if set, runs once the rows are written, before the footer is: to add
	// key-value metadata, which may depend on the bytes written so far (in written).
	BeforeClose func(w *pqarrow.FileWriter, written io.ReaderAt) error
}

// WriteParquet writes rec to path (making its folder) with arrow-go's pqarrow writer,
// and returns path.
func WriteParquet(t testing.TB, path string, rec arrow.RecordBatch, o Parquet) string {
	t.Helper()
	fh := create(t, path)
	defer fh.Close()
	writeArrow(t, fh, fh, rec, o)
	return path
}

// ParquetBytes is the file WriteParquet would write, in memory.
func ParquetBytes(t testing.TB, rec arrow.RecordBatch, o Parquet) []byte {
	t.Helper()
	var buf bytes.Buffer
	writeArrow(t, &buf, readerOf{&buf}, rec, o)
	return buf.Bytes()
}

func writeArrow(t testing.TB, w io.Writer, written io.ReaderAt, rec arrow.RecordBatch, o Parquet) {
	t.Helper()
	fw, err := pqarrow.NewFileWriter(rec.Schema(), w, parquet.NewWriterProperties(o.Props...), pqarrow.NewArrowWriterProperties(o.Arrow...))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if o.BeforeClose != nil {
		if err := o.BeforeClose(fw, written); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// RecordFromJSON is the record of schema sc that rows (a JSON array of objects) hold;
// the caller releases it.
func RecordFromJSON(t testing.TB, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// Fill writes column col (a leaf, in schema order) of row group rg through w, for
// WriteColumns and ColumnBytes.
type Fill func(rg, col int, w file.ColumnChunkWriter) error

// WriteColumns writes a file of schema root with arrow-go's low-level writer, for what
// pqarrow never writes (a logical type on another physical type, values out of range,
// chosen definition levels): rowGroups row groups, each leaf column of each written by
// fill. It returns path.
func WriteColumns(t testing.TB, path string, root *schema.GroupNode, props []parquet.WriterProperty, rowGroups int, fill Fill) string {
	t.Helper()
	fh := create(t, path)
	defer fh.Close()
	writeColumns(t, fh, root, props, rowGroups, fill)
	return path
}

// ColumnBytes is the file WriteColumns would write, in memory.
func ColumnBytes(t testing.TB, root *schema.GroupNode, props []parquet.WriterProperty, rowGroups int, fill Fill) []byte {
	t.Helper()
	var buf bytes.Buffer
	writeColumns(t, &buf, root, props, rowGroups, fill)
	return buf.Bytes()
}

func writeColumns(t testing.TB, out io.Writer, root *schema.GroupNode, props []parquet.WriterProperty, rowGroups int, fill Fill) {
	t.Helper()
	w := file.NewParquetWriter(out, root, file.WithWriterProps(parquet.NewWriterProperties(props...)))
	for g := range rowGroups {
		rg, err := w.AppendRowGroupChecked()
		if err != nil {
			t.Fatal(err)
		}
		for c := range w.Schema.NumColumns() {
			cw, err := rg.NextColumn()
			if err != nil {
				t.Fatal(err)
			}
			if err := fill(g, c, cw); err != nil {
				t.Fatalf("row group %d, column %s: %v", g, w.Schema.Column(c).Path(), err)
			}
			if err := cw.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rg.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func create(t testing.TB, path string) *os.File {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	return fh
}

// readerOf reads what a buffer holds so far, for BeforeClose.
type readerOf struct{ b *bytes.Buffer }

func (r readerOf) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(r.b.Bytes()).ReadAt(p, off)
}
