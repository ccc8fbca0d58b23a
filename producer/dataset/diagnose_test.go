package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/producer/pages"
)

// When arrow-go cannot decode a list column, the error says which page of which leaf is
// wrong and how, from a walk of the chunk's pages, and never that arrow-go panicked.
func TestListChunkErrorNamesThePage(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "l.parquet", 0, 300, writeOpts{codec: compress.Codecs.Uncompressed,
		props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}})
	f, err := readLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := f.Leaf("l.list.element")
	if !ok || l.MaxRep == 0 {
		t.Fatalf("leaf of l: %+v, %v", l, ok)
	}
	start, _, _ := chunkRange(footerOf(t, f), 0, l.Index)
	data, _ := os.ReadFile(path)
	h, err := pages.ParseHeader(data[start:])
	if err != nil || h.Type != pages.DataPage {
		t.Fatalf("first page: %+v, %v", h, err)
	}
	// The repetition levels' length prefix, the first 4 bytes of the v1 body, now claims
	// more bytes than the page holds.
	binary.LittleEndian.PutUint32(data[start+int64(h.Size):], 1<<30)
	if err := os.WriteFile(path, data, 0o644); err != nil {
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
	cols, err := r.ReadRowGroup(context.Background(), 0, []string{"l"})
	if err == nil {
		release([][]*arrow.Chunked{cols})
		t.Fatal("a corrupt list chunk was read")
	}
	msg := err.Error()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(msg, `column "l"`) ||
		!strings.Contains(msg, "leaf l.list.element: page 0") || !strings.Contains(msg, "levels of 1073741824 bytes") ||
		strings.Contains(msg, "panicked") {
		t.Fatalf("got %q", msg)
	}
}
