package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/gen"
)

// A file cut short after serve opened it is read through a mapping: touching the lost
// pages faults, and the fault becomes an error naming the file and row group, not a
// crash of the producer.
func TestFileTruncatedWhileMappedIsAnError(t *testing.T) {
	dir := t.TempDir()
	c := gen.DefaultConfig()
	c.Out, c.Rows, c.Files, c.RowGroupRows, c.Features = dir, 4096, 1, 1024, 8
	if err := gen.Write(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Open(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("dataset: x\noutputs:\n  f: {columns: [f000..f007]}\n  id: id\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, err := newSource(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	layout := newRowLayout(src.rowSize)
	rs := newReaders(ds)
	rs.pages = newPageWork(len(src.outputs))
	defer rs.close()
	last := ds.RowGroups[len(ds.RowGroups)-1]
	r, err := rs.get(last.File)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, int(last.Rows)*layout.stride)
	if err := src.decode(context.Background(), rs.pages, r, ds.RowGroups[0], ds.RowGroups[0].Rows, dst, &layout); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	if err := os.Truncate(last.File.Path, last.File.Size/2); err != nil {
		t.Fatal(err)
	}
	err = src.decode(context.Background(), rs.pages, r, last, last.Rows, dst, &layout)
	if !errors.Is(err, dataset.ErrCorrupt) || !strings.Contains(err.Error(), "changed while it was read") ||
		!strings.Contains(err.Error(), last.File.Path) {
		t.Fatalf("got %v, want an error about the file changing", err)
	}
}
