// Command rawdecode is the decode ceiling for bench/producer.sh: it reads the columns a
// serve config uses, from every row group of its dataset, with plain arrow-go pqarrow
// (no checksums, no transforms, no rings), on N goroutines, and prints the rate.
//
//	go run ./bench/rawdecode --config bindings/python/examples/demo.yaml --dataset DIR --workers 2
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
)

func main() {
	path := flag.String("config", "", "serve config whose columns are read")
	ds := flag.String("dataset", "", "override the config's dataset")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines, each reading whole row groups")
	flag.Parse()
	if err := run(*path, *ds, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "rawdecode:", err)
		os.Exit(1)
	}
}

func run(path, dsPath string, workers int) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	if dsPath != "" {
		cfg.Dataset = dsPath
	}
	d, err := dataset.Open(cfg.Dataset)
	if err != nil {
		return err
	}
	cols, err := columns(cfg, d)
	if err != nil {
		return err
	}
	var next, rows, bytes atomic.Int64
	errs := make([]error, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(d.RowGroups) || errs[w] != nil {
					return
				}
				rg := d.RowGroups[i]
				n, err := readRowGroup(rg, cols)
				errs[w] = err
				rows.Add(rg.Rows)
				bytes.Add(n)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("rawdecode: %d rows, %d columns, %d row groups, %d workers: %.2f s, %.0f rows/s, %.1f MB/s of Arrow buffers\n",
		rows.Load(), len(cols), len(d.RowGroups), workers, secs, float64(rows.Load())/secs, float64(bytes.Load())/secs/1e6)
	return nil
}

// columns are the leaf indices of every column the config's outputs and filter read.
func columns(cfg *config.Config, d *dataset.Dataset) ([]int, error) {
	expanded, err := cfg.ExpandOutputs(d.ColumnNames())
	if err != nil {
		return nil, err
	}
	meta, err := d.Files[0].Footer()
	if err != nil {
		return nil, err
	}
	schema := meta.Schema
	seen := map[int]bool{}
	var out []int
	add := func(name string) {
		for i := range schema.NumColumns() {
			if schema.Column(i).ColumnPath()[0] == name && !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	for _, cols := range expanded {
		for _, c := range cols {
			add(c)
		}
	}
	for _, p := range cfg.Filter {
		add(p.Column)
	}
	return out, nil
}

// readRowGroup decodes cols of rg into Arrow arrays and returns their buffer bytes.
func readRowGroup(rg dataset.RowGroup, cols []int) (int64, error) {
	meta, err := rg.File.Footer()
	if err != nil {
		return 0, err
	}
	pages.RegisterCodecs() // Parquet's LZ4
	f, err := file.OpenParquetFile(rg.File.Path, false, file.WithMetadata(meta))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	tbl, err := r.ReadRowGroups(context.Background(), cols, []int{rg.Index})
	if err != nil {
		return 0, fmt.Errorf("%s row group %d: %w", rg.File.Path, rg.Index, err)
	}
	defer tbl.Release()
	var n int64
	for i := range int(tbl.NumCols()) {
		for _, a := range tbl.Column(i).Data().Chunks() {
			for _, b := range a.Data().Buffers() {
				if b != nil {
					n += int64(b.Len())
				}
			}
		}
	}
	return n, nil
}
