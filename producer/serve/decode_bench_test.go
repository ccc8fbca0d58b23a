package serve

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/gen"
)

// benchConfig is bench/peers/bench.yaml's work: the side-by-side benchmark's outputs.
const benchConfig = `
dataset: unused
outputs:
  features:
    columns: [f000..f099]
    dtype: float32
    transforms:
      - fill_null: 0
      - normalize: {mean: 0.25, std: 1.5}
  cats:
    columns: [c00..c25]
    transforms:
      - hash_bucket: {buckets: 100000}
  strings:
    columns: [s00..s03]
    transforms:
      - fill_null: ""
      - hash_bucket: 1000
  label:
    columns: label
  id:
    columns: id
`

// BenchmarkDecodeRowGroup decodes and transforms one file of the default dataset's
// shape (row groups of 16384 rows) into records, as a worker does, by the page decoder
// and by arrow-go. Set SHMLOADER_BENCH_DATA to a directory of such files to use it.
func BenchmarkDecodeRowGroup(b *testing.B) {
	dir := os.Getenv("SHMLOADER_BENCH_DATA")
	if dir == "" {
		dir = b.TempDir()
		rows := int64(65536)
		if testing.Short() {
			rows = 16384
		}
		c := gen.DefaultConfig()
		c.Out, c.Rows, c.Files, c.RowGroupRows = dir, rows, 1, 16384
		if err := gen.Write(context.Background(), c, nil); err != nil {
			b.Fatal(err)
		}
	}
	ds, err := dataset.Open(filepath.Join(dir, "*.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Parse([]byte(benchConfig), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"pages", "arrow"} {
		b.Run(mode, func(b *testing.B) {
			src, err := newSource(ds, cfg)
			if err != nil {
				b.Fatal(err)
			}
			src.useArrays(mode == "arrow")
			layout := newRowLayout(src.rowSize)
			rs := newReaders(ds)
			rs.pages = src.cols.NewWorker()
			defer rs.close()
			var maxRows int64
			for _, rg := range ds.RowGroups {
				maxRows = max(maxRows, rg.Rows)
			}
			dst := make([]byte, int(maxRows)*layout.stride)
			groups := ds.RowGroups[:min(len(ds.RowGroups), 4)]
			rows := int64(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rg := groups[i%len(groups)]
				r, err := rs.get(rg.File)
				if err != nil {
					b.Fatal(err)
				}
				if err := src.decode(context.Background(), rs.pages, r, rg, rg.Rows, dst, &layout); err != nil {
					b.Fatal(err)
				}
				rows += rg.Rows
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(rows)*1e6, "s/1Mrows")
		})
	}
}
