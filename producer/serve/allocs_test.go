// The race detector drops sync.Pool items at random, so allocation counts are only
// meaningful without it.

//go:build !race

package serve

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
)

// writePaged writes rows rows of a float, a dictionary-encoded int and a string column
// (a tenth null) as one row group, in data pages of about pageBytes.
func writePaged(t *testing.T, path string, rows int, pageBytes int64) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "c", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range rows {
		if i%10 == 3 {
			for j := range 3 {
				b.Field(j).AppendNull()
			}
			continue
		}
		b.Field(0).(*array.Float32Builder).Append(float32(i) * 0.5)
		b.Field(1).(*array.Int64Builder).Append(int64(i % 37))
		b.Field(2).(*array.StringBuilder).Append(fmt.Sprint("k", i%11))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	testkit.WriteParquet(t, path, rec, testkit.Parquet{Props: []parquet.WriterProperty{parquet.WithDataPageSize(pageBytes), parquet.WithBatchSize(64),
		parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(int64(rows))}})
}

// countPages counts the pages of rg's chunks.
func countPages(t *testing.T, r *dataset.Reader, rg dataset.RowGroup) int {
	n := 0
	for _, name := range []string{"f", "c", "s"} {
		l, _ := rg.File.Leaf(name)
		cs, _, err := r.ReadChunks(context.Background(), rg.Index, []dataset.Leaf{l}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for data := cs[0].Data; len(data) > 0; n++ {
			h, err := pages.ParseHeader(data)
			if err != nil {
				t.Fatal(err)
			}
			data = data[h.Size+h.Compressed:]
		}
	}
	return n
}

// The page path allocates nothing per page: decoding a row group in 256-byte pages (over
// a hundred) costs
// the same allocations as in one page per chunk.
func TestPagePathAllocationsDoNotGrowWithPages(t *testing.T) {
	cfg, err := config.Parse([]byte("dataset: x\noutputs:\n  f: {columns: f, transforms: [fill_null: 0, normalize: {mean: 1, std: 2}]}\n"+
		"  c: {columns: c, transforms: [hash_bucket: 100]}\n  s: {columns: s, transforms: [fill_null: \"\", hash_bucket: 10]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	allocs := map[int64]float64{}
	for _, page := range []int64{1 << 20, 256} {
		path := filepath.Join(t.TempDir(), "p.parquet")
		writePaged(t, path, 8192, page)
		ds, err := dataset.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		src, err := newSource(ds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		layout := newRowLayout(src.rowSize)
		rs := newReaders(ds)
		rs.pages = src.cols.NewWorker()
		rg := ds.RowGroups[0]
		r, err := rs.get(rg.File)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, int(rg.Rows)*layout.stride)
		decode := func() {
			if err := src.decode(context.Background(), rs.pages, r, rg, rg.Rows, dst, &layout); err != nil {
				t.Fatal(err)
			}
		}
		decode() // buffers grow to their size once
		allocs[page] = testing.AllocsPerRun(5, decode)
		if n := countPages(t, r, rg); page == 256 && n < 100 || page > 256 && n > 6 {
			t.Fatalf("%d pages in the row group's chunks with %d-byte pages", n, page)
		}
		rs.close()
	}
	if allocs[256] != allocs[1<<20] {
		t.Fatalf("allocations per row group: %v with 1 MiB pages, %v with 256-byte pages", allocs[1<<20], allocs[256])
	}
	t.Logf("allocations per row group: %v", allocs[256])
}
