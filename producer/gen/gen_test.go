package gen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shmloader/shmloader/producer/dataset"
)

// small is a dataset that takes a fraction of a second, even under -race.
func small(dir string) Config {
	c := DefaultConfig()
	c.Out, c.Rows, c.Files, c.RowGroupRows = dir, 3000, 3, 400
	c.Features, c.Categoricals, c.Strings, c.ListMax = 9, 5, 2, 6
	c.Seed = 7
	return c
}

// forCodec shrinks c for zstd, whose encoders are slow to set up under -race.
func forCodec(c Config, codec string) Config {
	c.Compression = codec
	if codec == "zstd" {
		c.Rows, c.Files, c.Features, c.Categoricals = 800, 2, 3, 2
	}
	return c
}

func write(t *testing.T, c Config) *dataset.Dataset {
	t.Helper()
	var log bytes.Buffer
	if err := Write(context.Background(), c, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "gen: wrote ") {
		t.Errorf("no summary line in %q", log.String())
	}
	d, err := dataset.Open(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// readColumns reads every row group of d and concatenates each column across them.
func readColumns(t *testing.T, d *dataset.Dataset) map[string]arrow.Array {
	t.Helper()
	names := d.ColumnNames()
	parts := make(map[string][]arrow.Array)
	for _, f := range d.Files {
		r, err := d.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range footerOf(t, f).RowGroups {
			cols, err := r.ReadRowGroup(context.Background(), i, names)
			if err != nil {
				t.Fatal(err)
			}
			for k, c := range cols {
				parts[names[k]] = append(parts[names[k]], c.Chunks()...)
				for _, a := range c.Chunks() {
					a.Retain()
				}
				c.Release()
			}
		}
		r.Close()
	}
	out := make(map[string]arrow.Array)
	for name, p := range parts {
		a, err := array.Concatenate(p, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = a
	}
	return out
}

func TestDeterministic(t *testing.T) {
	for _, comp := range []string{"snappy", "zstd"} {
		a, b := t.TempDir(), t.TempDir()
		ca, cb := forCodec(small(a), comp), forCodec(small(b), comp)
		write(t, ca)
		write(t, cb)
		for i := 0; i < ca.Files; i++ {
			x, _ := os.ReadFile(filepath.Join(a, FileName(i)))
			y, _ := os.ReadFile(filepath.Join(b, FileName(i)))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Fatalf("%s: %s differs between runs (%d and %d bytes)", comp, FileName(i), len(x), len(y))
			}
		}
		if ents, _ := os.ReadDir(a); len(ents) != ca.Files {
			t.Fatalf("%s: %d entries in the output, want %d files and nothing else", comp, len(ents), ca.Files)
		}
	}
}

func TestValuesIndependentOfSplit(t *testing.T) {
	one := small(t.TempDir())
	one.Files, one.RowGroupRows = 1, one.Rows
	many := small(t.TempDir())
	many.Files, many.RowGroupRows, many.Compression = 4, 333, "none"
	x, y := readColumns(t, write(t, one)), readColumns(t, write(t, many))
	for name, a := range x {
		if !array.Equal(a, y[name]) {
			t.Errorf("column %s differs between 1 file of 1 row group and 4 files of 333-row groups", name)
		}
	}
	if len(x) != 1+9+5+2+2 {
		t.Errorf("%d columns", len(x))
	}
	ids := x["id"].(*array.Int64)
	for i := 0; i < ids.Len(); i++ {
		if ids.Value(i) != int64(i) {
			t.Fatalf("id %d at row %d", ids.Value(i), i)
		}
	}
	seed := small(t.TempDir())
	seed.Seed++
	z := readColumns(t, write(t, seed))
	if array.Equal(x["f001"], z["f001"]) {
		t.Error("another seed gave the same values")
	}
}

func TestCompression(t *testing.T) {
	want := map[string]string{"snappy": "SNAPPY", "zstd": "ZSTD", "lz4": "LZ4", "lz4_raw": "LZ4_RAW", "none": "UNCOMPRESSED"}
	for name, codec := range want {
		d := write(t, forCodec(small(t.TempDir()), name))
		for _, f := range d.Files {
			cc, err := footerOf(t, f).RowGroup(0).ColumnChunk(1)
			if err != nil || cc.Compression().String() != codec {
				t.Errorf("%s: %s has %v (%v)", name, f.Path, cc.Compression(), err)
			}
		}
	}
	c := small(t.TempDir())
	c.Compression = "lzo"
	if err := Write(context.Background(), c, nil); err == nil || !strings.Contains(err.Error(), "lzo") {
		t.Errorf("unknown codec: %v", err)
	}
}

// Both LZ4 codecs hold the very values snappy does, through our Hadoop-framed writer and
// reader for LZ4.
func TestLZ4SameValues(t *testing.T) {
	want := readColumns(t, write(t, small(t.TempDir())))
	for _, codec := range []string{"lz4", "lz4_raw"} {
		got := readColumns(t, write(t, forCodec(small(t.TempDir()), codec)))
		for name, a := range want {
			if !array.Equal(a, got[name]) {
				t.Errorf("%s: column %s differs from snappy's", codec, name)
			}
		}
	}
}
