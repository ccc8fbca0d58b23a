package dataset

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// checkValues compares the columns a, b, s, l (any subset, in cols order) of rows
// first.. with testRecord.
func checkValues(t *testing.T, names []string, cols []*arrow.Chunked, first int64) {
	t.Helper()
	want := testRecord(first, int64(cols[0].Len()))
	defer want.Release()
	for i, name := range names {
		idx := want.Schema().FieldIndices(name)[0]
		got := array.NewChunkedSlice(cols[i], 0, int64(cols[i].Len()))
		exp := arrow.NewChunked(want.Column(idx).DataType(), []arrow.Array{want.Column(idx)})
		if !array.ChunkedEqual(got, exp) {
			t.Errorf("column %s of rows from %d: got %v, want %v", name, first, got, exp)
		}
		got.Release()
		exp.Release()
	}
}

// checkAllValues reads columns a, b, s, l of every row group of d (rgRows rows each) and
// compares them with testRecord.
func checkAllValues(t *testing.T, d *Dataset, rgRows int64) {
	t.Helper()
	names := []string{"a", "b", "s", "l"}
	groups := readAll(t, d, names)
	defer release(groups)
	for g, cols := range groups {
		checkValues(t, names, cols, int64(g)*rgRows)
	}
}

func TestReadRowGroupValues(t *testing.T) {
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Lz4, compress.Codecs.Lz4Raw} {
		dir := t.TempDir()
		writeTest(t, dir, "a.parquet", 0, 250, writeOpts{rgRows: 100, codec: codec, checksums: true})
		d, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"l", "a", "s", "b"} // not schema order: results follow the request
		groups := readAll(t, d, names)
		for g, cols := range groups {
			if len(cols) != len(names) || cols[0].DataType().ID() != arrow.LIST {
				t.Fatalf("%s: row group %d: %d columns, first %v", codec, g, len(cols), cols[0].DataType())
			}
			checkValues(t, names, cols, int64(g)*100)
		}
		release(groups)
	}
}

func TestReadOnlyRequestedColumns(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 1000, writeOpts{rgRows: 500})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		name string
		leaf int
	}{{"b", 1}, {"l", 3}} {
		before := r.read
		cols, err := r.ReadRowGroup(context.Background(), 1, []string{c.name})
		if err != nil {
			t.Fatal(err)
		}
		checkValues(t, []string{c.name}, cols, 500)
		cols[0].Release()
		_, n, _ := chunkRange(footerOf(t, d.Files[0]), 1, c.leaf)
		if got := r.read - before; got != n {
			t.Errorf("reading %s read %d bytes, its chunk has %d", c.name, got, n)
		}
	}
}

func TestReadRowGroupErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 100, writeOpts{rgRows: 50})
	d, _ := Open(path)
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	var de *Error
	if _, err := r.ReadRowGroup(ctx, 2, []string{"a"}); !errors.Is(err, ErrRowGroup) || !errors.As(err, &de) || de.RowGroup != 2 {
		t.Errorf("row group 2 of 2: %v", err)
	}
	if _, err := r.ReadRowGroup(ctx, 0, []string{"a", "zz"}); !errors.Is(err, ErrNoColumn) || !errors.As(err, &de) || de.Column != "zz" || de.Path != path {
		t.Errorf("unknown column: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.ReadRowGroup(cctx, 0, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 400, writeOpts{rgRows: 50, codec: compress.Codecs.Snappy, checksums: true})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "s", "l"}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r, err := d.OpenReader(d.Files[0])
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			for k := 0; k < 8; k++ {
				rg := (k + w) % 8
				cols, err := r.ReadRowGroup(context.Background(), rg, names)
				if err != nil {
					t.Error(err)
					return
				}
				checkValues(t, names, cols, int64(rg)*50)
				for _, c := range cols {
					c.Release()
				}
				if _, err := d.Stats(d.RowGroups[rg], "a"); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
}
