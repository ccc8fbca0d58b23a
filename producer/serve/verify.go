package serve

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shmloader/shmloader/producer/colsrc"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/transform"
)

// A Verifier checks, before a job starts, that serve will read a dataset (`shmloader
// inspect --verify`): it reads every page of the columns a config reads, in every row
// group, by the roads decode reads them (verifyrg.go), and goes on past damage, so that
// every damaged column chunk is reported, not only the first.
//
// With a config, each row group is read as decode reads it: the outputs that decode
// reads from pages through the same page path (colsrc.Worker's ReadChunks, then
// ApplyChunks over no row: ApplyRuns still decodes and checks all of each chunk), the
// filter's columns and the other outputs' as decode reads them as arrays (a flat one
// decoded into its array by colsrc.BuildArray, a nested one through arrow-go). Without
// one, every column is read by that whole-column road, which for a flat column checks
// all that its page path checks too.
type Verifier struct {
	ds      *dataset.Dataset
	src     *source          // nil: every column, without a config
	columns []string         // the columns checked, in the dataset's order
	order   map[string]int   // a column's place in the dataset's order, for the report
	dests   []transform.Dest // per output: a destination for no rows
}

// NewVerifier checks ds: the columns cfg's outputs and filter read, or every column
// when cfg is nil.
func NewVerifier(ds *dataset.Dataset, cfg *config.Config) (*Verifier, error) {
	v := &Verifier{ds: ds, order: map[string]int{}}
	names := ds.ColumnNames()
	for i, n := range names {
		v.order[n] = i
	}
	if cfg == nil {
		for _, n := range names {
			if f, _ := ds.Field(n); !ds.IsPartition(n) && !isStruct(f.Type) {
				v.columns = append(v.columns, n) // a struct is checked by its fields
			}
		}
		return v, nil
	}
	src, err := newSource(ds, cfg)
	if err != nil {
		return nil, err
	}
	v.src = src
	for _, n := range src.columns {
		if !ds.IsPartition(n) {
			v.columns = append(v.columns, n)
		}
	}
	slices.SortFunc(v.columns, func(a, b string) int { return cmp.Compare(v.order[a], v.order[b]) })
	for o, out := range src.outputs {
		d := transform.Dest{Bufs: make([][]byte, len(out.Tensors())), Stride: make([]int, len(out.Tensors()))}
		for i := range d.Stride {
			d.Stride[i] = src.rowSize[src.outTen[o]+i]
		}
		v.dests = append(v.dests, d)
	}
	return v, nil
}

// VerifyConfig opens cfg's dataset as Run does, for NewVerifier.
func VerifyConfig(cfg *config.Config) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ds, err := openDataset(context.Background(), cfg, nil)
	if err != nil {
		return nil, err
	}
	return NewVerifier(ds, cfg)
}

// Dataset is the dataset checked.
func (v *Verifier) Dataset() *dataset.Dataset { return v.ds }

// Columns are the columns checked, in the dataset's order (partition columns, which
// have no chunks, left out).
func (v *Verifier) Columns() []string { return v.columns }

// VerifyProgress is what a Run has done so far. Its workers add to it as they go; any
// goroutine may read it while it runs.
type VerifyProgress struct {
	RowGroups atomic.Int64 // row groups done
	Bytes     atomic.Int64 // column chunk bytes checked, as stored
	// Share is the CompressedBytes of the row groups done (all their columns): against
	// the dataset's total, the fraction of the work done.
	Share   atomic.Int64
	Damaged atomic.Int64 // damaged column chunks found (VerifyReport.Damaged so far)
}

// VerifyReport is what a Run checked and found.
type VerifyReport struct {
	RowGroups            int   // row groups checked in full (not those of a file that could not be opened)
	Chunks, Pages, Bytes int64 // column chunks checked, their pages and their bytes as stored
	// Uncovered counts the pages no CRC covers (neither a page CRC nor a chunk checksum in
	// the footer): a value overwritten in them decodes as another value, and no check
	// can tell.
	Uncovered int64
	// Damaged names every column chunk serve would fail on, by file, row group and
	// column, with what is wrong (the page, where a check can tell), sorted by file,
	// row group and then column in the dataset's order, whatever the workers' timing.
	// An error about a whole file (it cannot be opened) comes once, with no column.
	Damaged []*dataset.Error
}

// finding is a damaged column chunk and where it sorts.
type finding struct {
	g, col int // global row group, column's place (-1: none)
	err    *dataset.Error
}

// Run checks every row group with workers goroutines (0: GOMAXPROCS), each holding one
// row group's chunks at a time, and adds to p (nil: none) as it goes. When ctx is
// cancelled it stops within a column chunk and returns what it found so far, with
// ctx's error.
func (v *Verifier) Run(ctx context.Context, workers int, p *VerifyProgress) (*VerifyReport, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if p == nil {
		p = &VerifyProgress{}
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		rep      VerifyReport
		found    []finding
		unopened sync.Map // *dataset.File whose Reader failed: reported once
		wg       sync.WaitGroup
	)
	for range min(workers, max(1, len(v.ds.RowGroups))) {
		wg.Go(func() {
			w := &verifyWorker{v: v, ctx: ctx, readers: newReaders(v.ds), unopened: &unopened, p: p}
			w.arrays = colsrc.NewArrays(v.ds)
			if v.src != nil {
				w.pw = v.src.cols.NewWorker()
			}
			defer w.readers.close()
			for ctx.Err() == nil {
				g := int(next.Add(1)) - 1
				if g >= len(v.ds.RowGroups) {
					break
				}
				rg := v.ds.RowGroups[g]
				if w.rowGroup(rg) {
					w.rep.RowGroups++
				}
				if ctx.Err() == nil {
					p.RowGroups.Add(1)
					p.Share.Add(rg.CompressedBytes)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			rep.RowGroups += w.rep.RowGroups
			rep.Chunks += w.rep.Chunks
			rep.Pages += w.rep.Pages
			rep.Uncovered += w.rep.Uncovered
			rep.Bytes += w.rep.Bytes
			found = append(found, w.found...)
		})
	}
	wg.Wait()
	slices.SortFunc(found, func(a, b finding) int {
		return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.col, b.col), cmp.Compare(a.err.Error(), b.err.Error()))
	})
	for _, f := range found {
		rep.Damaged = append(rep.Damaged, f.err)
	}
	return &rep, ctx.Err()
}
