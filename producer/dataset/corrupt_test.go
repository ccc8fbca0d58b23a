package dataset

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// flip inverts n bytes in the middle of column chunk leaf of row group rg.
func flip(t *testing.T, path string, rg, leaf, n int) {
	t.Helper()
	f, err := readLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	start, size, _ := chunkRange(footerOf(t, f), rg, leaf)
	data, _ := os.ReadFile(path)
	mid := start + size/2
	for i := int64(0); i < int64(n); i++ {
		data[mid+i] ^= 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptChunkIsAnError(t *testing.T) {
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Lz4} {
		dir := t.TempDir()
		path := writeTest(t, dir, "a.parquet", 0, 300, writeOpts{rgRows: 100, codec: codec, checksums: true})
		flip(t, path, 1, 1, 2) // column b of row group 1
		d, err := Open(path)
		if err != nil {
			t.Fatalf("%s: the footer is intact, Open must work: %v", codec, err)
		}
		r, err := d.OpenReader(d.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, rg := range []int{0, 2} { // other row groups are fine
			cols, err := r.ReadRowGroup(ctx, rg, []string{"a", "b"})
			if err != nil {
				t.Fatalf("%s: row group %d: %v", codec, rg, err)
			}
			checkValues(t, []string{"a", "b"}, cols, int64(rg)*100)
			release([][]*arrow.Chunked{cols})
		}
		cols, err := r.ReadRowGroup(ctx, 1, []string{"a"}) // so are the other columns
		if err != nil {
			t.Fatalf("%s: column a: %v", codec, err)
		}
		release([][]*arrow.Chunked{cols})
		_, err = r.ReadRowGroup(ctx, 1, []string{"a", "b"})
		var de *Error
		if !errors.Is(err, ErrChecksum) || !errors.As(err, &de) || de.Path != path || de.RowGroup != 1 || de.Column != "b" {
			t.Fatalf("%s: got %v, want a checksum error naming the file, row group 1 and column b", codec, err)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "row group 1") || !strings.Contains(msg, `column "b"`) {
			t.Errorf("message %q lacks context", msg)
		}
		r.Close()
	}
}

// TestCorruptWithoutChecksumsNeverPanics flips bytes all over the column chunks of a
// file that has no checksums: decoding may fail or, where the codec cannot tell,
// return other values, but it must never panic.
func TestCorruptWithoutChecksumsNeverPanics(t *testing.T) {
	for _, codec := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Lz4} {
		t.Run(codec.String(), func(t *testing.T) { corruptEverywhere(t, codec) })
	}
}

func corruptEverywhere(t *testing.T, codec compress.Compression) {
	dir := t.TempDir()
	clean := writeTest(t, dir, "clean.parquet", 0, 200, writeOpts{rgRows: 200, codec: codec})
	f, err := readLocal(clean)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(clean)
	names := []string{"a", "b", "s", "l"}
	errs := 0
	for leaf := range footerOf(t, f).Schema.NumColumns() {
		start, n, _ := chunkRange(footerOf(t, f), 0, leaf)
		for _, at := range []int64{0, 3, 10, n / 3, n / 2, n - 5} {
			bad := append([]byte(nil), data...)
			bad[start+at] ^= 0x55
			path := fmt.Sprintf("%s/bad-%d-%d.parquet", dir, leaf, at)
			os.WriteFile(path, bad, 0o644)
			d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.OpenReader(d.Files[0])
			if err != nil {
				t.Fatal(err)
			}
			cols, err := r.ReadRowGroup(context.Background(), 0, names)
			if err != nil {
				errs++
				var de *Error
				if !errors.As(err, &de) || de.Column == "" || de.RowGroup != 0 {
					t.Errorf("error without context: %v", err)
				}
			}
			release([][]*arrow.Chunked{cols})
			r.Close()
		}
	}
	if errs == 0 {
		t.Error("no flipped byte was noticed at all")
	}
}

// A checksum entry copied from another file (as a rewrite through pyarrow would) does not
// describe this file's chunks: it is ignored, not reported as corruption.
func TestStaleChecksumsAreIgnored(t *testing.T) {
	dir := t.TempDir()
	orig := writeTest(t, dir, "orig.parquet", 0, 300, writeOpts{rgRows: 100, checksums: true})
	f, err := readLocal(orig)
	if err != nil || f.ft.sums == nil {
		t.Fatalf("%v, sums %v", err, f)
	}
	stale := *footerOf(t, f).KeyValueMetadata().FindValue(ChecksumKey)
	path := writeTest(t, dir, "copy.parquet", 0, 300, writeOpts{rgRows: 150, kv: map[string]string{ChecksumKey: stale}})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if ft, err := d.Files[0].footer(); err != nil || ft.sums != nil {
		t.Fatal("checksums of another layout were taken", err)
	}
	release(readAll(t, d, []string{"a", "b", "s", "l"}))
	for _, k := range d.Schema.Metadata().Keys() {
		if strings.HasPrefix(k, "shmloader.") {
			t.Errorf("schema metadata carries %s", k)
		}
	}
}

// A footer whose chunk size would overflow offset + size is refused when the file is
// opened, not left to make a reader allocate or panic.
func TestChunkRangeOverflowIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "o.parquet", 0, 10, writeOpts{codec: compress.Codecs.Snappy})
	f, err := readLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	footerOf(t, f).RowGroups[0].Columns[0].MetaData.TotalCompressedSize = math.MaxInt64 - 3
	if err := checkChunkRanges(footerOf(t, f), f.Size); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "lies outside the file") {
		t.Fatalf("got %v", err)
	}
}

// Data pages v2 keep their levels outside the compressed section: the checks of a
// compressed body look past them (a snappy v2 page of a nullable column read fine).
func TestV2PagesPassTheBodyChecks(t *testing.T) {
	dir := t.TempDir()
	for _, codec := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Zstd} {
		path := writeTest(t, dir, codec.String()+".parquet", 0, 300, writeOpts{rgRows: 100, codec: codec,
			props: []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2)}})
		d, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		checkAllValues(t, d, 100)
	}
}
