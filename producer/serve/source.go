package serve

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/colsrc"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/filter"
	"github.com/shmloader/shmloader/producer/transform"
	"github.com/shmloader/shmloader/ring"
)

// source is the dataset with its compiled outputs and filter: what to read from a row
// group and what to make of it.
type source struct {
	ds      *dataset.Dataset
	outputs []*transform.Output
	filter  *filter.Filter
	columns []string // every column read, outputs' first
	outCols [][]int  // per output: indices into columns
	fltCols []int    // the filter's columns: indices into columns
	tensors []ring.TensorSpec
	outTen  []int // per output: index of its first tensor
	rowSize []int // bytes per row of each tensor
	// arrays: every output takes the array path (SHMLOADER_DECODER=arrow): its flat
	// columns decoded into Arrow arrays by the page decoder, then ApplyTo.
	arrays bool
	cols   *colsrc.Sources
}

func newSource(ds *dataset.Dataset, cfg *config.Config) (*source, error) {
	s := &source{ds: ds}
	switch d := os.Getenv("SHMLOADER_DECODER"); d {
	case "", "pages":
	case "arrow":
		s.arrays = true
	default:
		return nil, fmt.Errorf("SHMLOADER_DECODER=%q: want pages (the default) or arrow", d)
	}
	names := ds.ColumnNames()
	index := map[string]int{}
	use := func(col string) int {
		if i, ok := index[col]; ok {
			return i
		}
		index[col] = len(s.columns)
		s.columns = append(s.columns, col)
		return index[col]
	}
	expanded, err := cfg.ExpandOutputs(names)
	if err != nil {
		return nil, err
	}
	for k, o := range cfg.Outputs {
		cols := expanded[k]
		fields := make([]arrow.Field, len(cols))
		idx := make([]int, len(cols))
		for i, c := range cols {
			fields[i], _ = ds.Field(c)
			idx[i] = use(c)
		}
		out, err := transform.Compile(o, fields)
		if err != nil {
			return nil, inConfig(cfg, err)
		}
		s.outTen = append(s.outTen, len(s.tensors))
		s.outputs = append(s.outputs, out)
		s.outCols = append(s.outCols, idx)
		s.tensors = append(s.tensors, out.Tensors()...)
	}
	fields := map[string]arrow.Field{}
	for _, n := range names {
		fields[n], _ = ds.Field(n)
	}
	flt, err := filter.Compile(cfg.Filter, fields)
	if err != nil {
		return nil, inConfig(cfg, err)
	}
	s.filter = flt
	if flt != nil {
		for _, c := range flt.Columns() {
			s.fltCols = append(s.fltCols, use(c))
		}
	}
	s.cols = colsrc.NewSources(ds, s.outputs, s.arrays)
	for _, t := range s.tensors {
		n := t.DType.Size()
		for _, d := range t.Shape {
			n *= d
		}
		s.rowSize = append(s.rowSize, n)
	}
	return s, nil
}

// inConfig names the config file in an error that gives only its line.
func inConfig(cfg *config.Config, err error) error {
	if cfg.Source == "" {
		return err
	}
	return fmt.Errorf("%s: %w", cfg.Source, err)
}

// filtering reports whether rows are filtered at all.
func (s *source) filtering() bool { return s.filter != nil && !s.filter.Empty() }

// mayMatch says, from footer statistics, whether row group rg can hold kept rows.
func (s *source) mayMatch(rg dataset.RowGroup) (bool, error) {
	if !s.filtering() {
		return rg.Rows > 0, nil
	}
	stats := map[string]dataset.Stats{}
	for _, c := range s.filter.Columns() {
		st, err := s.ds.Stats(rg, c)
		if err != nil {
			return false, err
		}
		stats[c] = st
	}
	return rg.Rows > 0 && s.filter.MayMatch(stats), nil
}

// selectRows reads the filter's columns of rg and returns the kept rows (nil: all).
func (s *source) selectRows(cols []*arrow.Chunked, rg dataset.RowGroup) ([]int32, error) {
	if !s.filtering() {
		return nil, nil
	}
	in := make([]*arrow.Chunked, len(s.fltCols))
	for i, c := range s.fltCols {
		in[i] = cols[c]
	}
	sel, err := s.filter.Select(in, int(rg.Rows))
	if err != nil {
		return nil, &dataset.Error{Op: "filter", Path: rg.File.Path, RowGroup: rg.Index, Err: err}
	}
	return sel, nil
}

// useArrays sets whether every output takes the array path.
func (s *source) useArrays(on bool) {
	s.arrays = on
	s.cols = colsrc.NewSources(s.ds, s.outputs, on)
}

// countKept reads only the filter's columns of rg, with a, and counts its kept rows.
func (s *source) countKept(ctx context.Context, a *colsrc.Arrays, r *dataset.Reader, rg dataset.RowGroup) (int64, error) {
	cols, err := a.Read(ctx, r, rg, s.filter.Columns())
	if err != nil {
		return 0, err
	}
	defer release(cols)
	sel, err := s.filter.Select(cols, int(rg.Rows))
	if err != nil {
		return 0, &dataset.Error{Op: "filter", Path: rg.File.Path, RowGroup: rg.Index, Err: err}
	}
	return int64(len(sel)), nil
}

// decode reads rg, filters it and writes its kept rows' outputs into dst as records of
// layout l: tensor t of kept row k at dst[k*l.stride+l.off[t]]. want is the kept-row
// count the plan was made with. Every chunk the row group needs is read once
// (colsrc.Worker.Begin). Outputs whose columns are flat go straight from the pages into
// dst (colsrc.Worker.Apply); the rest, and the filter's columns, are made
// Arrow arrays (colsrc.Worker.Arrays: flat columns by the same page decoder, nested
// ones through arrow-go) for the transforms' ApplyTo.
func (s *source) decode(ctx context.Context, w *colsrc.Worker, r *dataset.Reader, rg dataset.RowGroup, want int64, dst []byte, l *rowLayout) error {
	plan := w.Plan(rg)
	need := s.arrayColumns(plan)
	w.Begin() // each chunk of rg is read once, right before its first use
	cols, err := readArrays(ctx, w, r, rg, s.columns, need)
	if err != nil {
		return err
	}
	defer release(cols)
	sel, err := s.selectRows(cols, rg)
	if err != nil {
		return err
	}
	n := rg.Rows
	if sel != nil {
		n = int64(len(sel))
	}
	if n != want {
		return &dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index,
			Err: fmt.Errorf("%d rows kept, %d when serving started: the file changed", n, want)}
	}
	for o, out := range s.outputs {
		ten := out.Tensors()
		d := transform.Dest{Bufs: make([][]byte, len(ten)), Stride: make([]int, len(ten))}
		for i := range ten {
			d.Bufs[i], d.Stride[i] = dst[l.off[s.outTen[o]+i]:], l.stride
		}
		if plan[o] != nil {
			if err := w.Apply(ctx, r, rg, o, plan[o], sel, d); err != nil {
				return s.decodeErr(rg, err)
			}
			continue
		}
		in := make([]*arrow.Chunked, len(s.outCols[o]))
		for i, c := range s.outCols[o] {
			in[i] = cols[c]
		}
		if err := out.ApplyTo(in, sel, d); err != nil {
			return &dataset.Error{Op: "transform", Path: rg.File.Path, RowGroup: rg.Index, Err: err}
		}
	}
	return nil
}

// arrayColumns is the columns to read as Arrow arrays: the filter's and those of the
// outputs not read from pages (nil entries in plan).
func (s *source) arrayColumns(plan [][]dataset.Leaf) []bool {
	need := make([]bool, len(s.columns))
	for _, c := range s.fltCols {
		need[c] = true
	}
	for o, ls := range plan {
		if ls == nil {
			for _, c := range s.outCols[o] {
				need[c] = true
			}
		}
	}
	return need
}

// pick is the names marked in need.
func pick(names []string, need []bool) []string {
	var want []string
	for c, n := range need {
		if n {
			want = append(want, names[c])
		}
	}
	return want
}

// readArrays makes the columns marked in need into arrays with w (the others stay nil).
func readArrays(ctx context.Context, w *colsrc.Worker, r *dataset.Reader, rg dataset.RowGroup, names []string, need []bool) ([]*arrow.Chunked, error) {
	want := pick(names, need)
	cols := make([]*arrow.Chunked, len(names))
	if len(want) == 0 {
		return cols, nil
	}
	got, err := w.Arrays(ctx, r, rg, want)
	if err != nil {
		return nil, err
	}
	k := 0
	for c, n := range need {
		if n {
			cols[c] = got[k]
			k++
		}
	}
	return cols, nil
}

// decodeErr names rg's file and row group in an error of the page path (one of package
// dataset already does).
func (s *source) decodeErr(rg dataset.RowGroup, err error) error {
	var de *dataset.Error
	if errors.As(err, &de) {
		return err
	}
	return &dataset.Error{Op: "decode", Path: rg.File.Path, RowGroup: rg.Index, Err: err}
}

func release(cols []*arrow.Chunked) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

// configHash identifies everything that changes the bytes trainers receive.
func configHash(cfg *config.Config, ds *dataset.Dataset) uint64 {
	h := fnv.New64a()
	h.Write(cfg.HashInput())
	fmt.Fprint(h, ds.Fingerprint())
	return h.Sum64()
}
