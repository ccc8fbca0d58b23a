package dataset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/producer/dataset/pqdamage"
)

// After a chunk checksum mismatch, which says only that a chunk is damaged, LocatePage
// names the page, for a damaged header and for a damaged snappy body; a column or row
// group without damage passes.
func TestLocatePageAfterChecksumMismatch(t *testing.T) {
	for _, part := range []pqdamage.Part{pqdamage.Header, pqdamage.Body} {
		t.Run(fmt.Sprint(part), func(t *testing.T) {
			path := writeTest(t, t.TempDir(), "a.parquet", 0, 3000, writeOpts{rgRows: 1000, codec: compress.Codecs.Snappy,
				checksums: true, props: []parquet.WriterProperty{parquet.WithDataPageSize(512), parquet.WithBatchSize(100)}})
			w, err := pqdamage.Page(path, 1, "b", 2, part)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.OpenReader(d.Files[0])
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.ReadRowGroup(context.Background(), 1, []string{"b"}); !errors.Is(err, ErrChecksum) {
				t.Fatalf("reading the damaged chunk: %v, want a checksum mismatch", err)
			}
			err = r.LocatePage(1, "b")
			var de *Error
			page := fmt.Sprintf("page 2 (chunk offset %d)", w.Offset-w.ChunkStart)
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &de) || de.Path != path || de.RowGroup != 1 || de.Column != "b" ||
				!strings.Contains(err.Error(), page) {
				t.Fatalf("LocatePage: %v, want an error naming the file, row group 1, column b and %s", err, page)
			}
			for _, c := range []struct {
				rg   int
				name string
			}{{0, "b"}, {2, "b"}, {1, "a"}, {1, "s"}, {1, "l"}} {
				if err := r.LocatePage(c.rg, c.name); err != nil {
					t.Errorf("row group %d column %s has no damage: %v", c.rg, c.name, err)
				}
			}
		})
	}
}

// Checked counts the chunks ReadRowGroup verified, their pages and their bytes as the
// footer gives them.
func TestCheckedCountsWhatReadRowGroupVerified(t *testing.T) {
	path := writeTest(t, t.TempDir(), "a.parquet", 0, 1000, writeOpts{rgRows: 500,
		props: []parquet.WriterProperty{parquet.WithDataPageSize(256), parquet.WithBatchSize(50), parquet.WithDictionaryDefault(false)}})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cols, err := r.ReadRowGroup(context.Background(), 1, []string{"a", "l"})
	if err != nil {
		t.Fatal(err)
	}
	release([][]*arrow.Chunked{cols})
	c := r.Checked()
	chunks, pages, bytes := c.Chunks, c.Pages, c.Bytes
	var wantBytes int64
	for _, leaf := range []int{0, 3} {
		_, n, _ := chunkRange(footerOf(t, d.Files[0]), 1, leaf)
		wantBytes += n
	}
	// 500 rows of int64 in pages of about 256 bytes: dozens of pages per column.
	if chunks != 2 || bytes != wantBytes || pages < 20 {
		t.Errorf("Checked() = %d chunks, %d pages, %d bytes; want 2 chunks, %d bytes and dozens of pages", chunks, pages, bytes, wantBytes)
	}
	if c.CRCPages != 0 || d.Files[0].ChunkSums {
		t.Errorf("a file without page CRCs or chunk sums: %d pages with a CRC, chunk sums %v", c.CRCPages, d.Files[0].ChunkSums)
	}
	with := writeTest(t, t.TempDir(), "b.parquet", 0, 100, writeOpts{rgRows: 50, checksums: true})
	if d, err := Open(with); err != nil || !d.Files[0].ChunkSums {
		t.Errorf("a file with chunk sums in its footer: %v", err)
	}
}
