package colsrc

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/transform"
)

// Sources reads a dataset's row groups for a set of compiled outputs: an output whose
// columns are all flat (or partition columns) and of types ApplyRuns reads goes
// straight from its chunks' pages into the destination (Worker.Apply); the others, and
// whatever else a caller needs as arrays (a filter's columns), are read as Arrow arrays
// (Worker.Arrays) for the transforms' array path (Output.ApplyTo).
type Sources struct {
	ds      *dataset.Dataset
	outputs []*transform.Output
	columns [][]string // per output, its columns
	arrays  bool
}

// NewSources reads ds for outputs, each compiled from the fields ds gives its
// Columns(). With arrays, every output takes the array path: flat columns are then
// decoded into Arrow arrays by the same page decoder and transformed by ApplyTo
// (SHMLOADER_DECODER=arrow), which tests hold to the same bytes.
func NewSources(ds *dataset.Dataset, outputs []*transform.Output, arrays bool) *Sources {
	s := &Sources{ds: ds, outputs: outputs, arrays: arrays}
	for _, o := range outputs {
		s.columns = append(s.columns, o.Columns())
	}
	return s
}

// Worker is one goroutine's decoders and buffers, reused from row group to row group.
type Worker struct {
	s      *Sources
	dec    []Decoders // per output
	arrays *Arrays
	leaves map[*dataset.File][][]dataset.Leaf // per output, its columns' leaves; nil: not from pages
	// consts are, per file and output, the values of its partition columns (nil for the
	// other columns, whose leaves have Index -1 there).
	consts map[*dataset.File][][]*Const
}

// NewWorker makes a goroutine's Worker.
func (s *Sources) NewWorker() *Worker {
	return &Worker{s: s, dec: make([]Decoders, len(s.outputs)), arrays: NewArrays(s.ds),
		leaves: map[*dataset.File][][]dataset.Leaf{}, consts: map[*dataset.File][][]*Const{}}
}

// Plan says which outputs of row group rg are read from pages (the rest take the array
// path), and the leaves of each: one per column, Index -1 for a partition column's.
func (w *Worker) Plan(rg dataset.RowGroup) [][]dataset.Leaf {
	plan := make([][]dataset.Leaf, len(w.s.outputs))
	if w.s.arrays {
		return plan
	}
	byOut, ok := w.leaves[rg.File]
	if !ok {
		byOut = w.fileLeaves(rg.File)
	}
	copy(plan, byOut)
	return plan
}

// fileLeaves finds, per output, the leaves of its columns in file f, or nil where some
// column is not flat or not of a type ApplyRuns reads; a partition column gets Index
// -1 and its value in w.consts.
func (w *Worker) fileLeaves(f *dataset.File) [][]dataset.Leaf {
	s := w.s
	byOut := make([][]dataset.Leaf, len(s.outputs))
	consts := make([][]*Const, len(s.outputs))
	for o, out := range s.outputs {
		ls := make([]dataset.Leaf, 0, len(s.columns[o]))
		for j, name := range s.columns[o] {
			if a, ok, err := s.ds.Constant(f, name, 1); ok {
				if err != nil {
					ls = nil
					break
				}
				c, ok := ConstOf(a)
				a.Release()
				if !ok || !out.ReadsValues(j, c.kind) {
					ls = nil
					break
				}
				if consts[o] == nil {
					consts[o] = make([]*Const, len(s.columns[o]))
				}
				consts[o][j] = &c
				ls = append(ls, dataset.Leaf{Index: -1})
				continue
			}
			l, ok := f.Leaf(name)
			if !ok || l.MaxRep > 0 || !out.ReadsValues(j, Kind(out.ColumnType(j), l.Type, l.TypeLen)) {
				ls = nil
				break
			}
			ls = append(ls, l)
		}
		byOut[o] = ls
	}
	if len(w.leaves) >= leafFiles {
		clear(w.leaves)
		clear(w.consts)
	}
	w.leaves[f], w.consts[f] = byOut, consts
	return byOut
}

// leafFiles bounds how many files' leaves a worker keeps: a window's row groups come from
// a few files, and a dataset of 100,000 files must not keep them all (each file's leaves
// are a few KB per output).
const leafFiles = 64

// Begin starts row group rg: Apply and Arrays then read each of its chunks once,
// however many outputs, the filter and the array path use it, each right before its
// first use.
func (w *Worker) Begin() { w.arrays.Begin() }

// Apply writes output o of rg from its chunks' pages, reading those not read since
// Begin: ls is Plan's for o.
func (w *Worker) Apply(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, o int, ls []dataset.Leaf, sel []int32, d transform.Dest) error {
	if err := w.arrays.Load(ctx, r, rg, ls); err != nil {
		return err
	}
	chunks, err := w.chunks(rg, ls)
	if err != nil {
		return err
	}
	return w.ApplyChunks(rg, o, chunks, sel, d)
}

// chunks is the chunks of leaves ls loaded since Begin, in order, the zero Chunk for a
// partition column's (which has none).
func (w *Worker) chunks(rg dataset.RowGroup, ls []dataset.Leaf) ([]pages.Chunk, error) {
	chunks := make([]pages.Chunk, len(ls))
	for j, l := range ls {
		c, ok := w.arrays.Chunk(l)
		if !ok {
			return nil, &dataset.Error{Op: "read", Path: rg.File.Path, RowGroup: rg.Index,
				Err: fmt.Errorf("leaf %d was not read for this row group", l.Index)}
		}
		chunks[j] = c
	}
	return chunks, nil
}

// ReadChunks reads the chunks of output o's leaves ls (Plan's) in rg alone: one per
// leaf, in order, the zero Chunk for a partition column's. They view the worker's
// buffer until its next read. (A Verifier reads each output by itself, to say which is
// damaged.)
func (w *Worker) ReadChunks(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, ls []dataset.Leaf) ([]pages.Chunk, error) {
	w.arrays.Begin()
	if err := w.arrays.Load(ctx, r, rg, ls); err != nil {
		return nil, err
	}
	return w.chunks(rg, ls)
}

// ApplyChunks writes output o of rg from chunks (ReadChunks').
func (w *Worker) ApplyChunks(rg dataset.RowGroup, o int, chunks []pages.Chunk, sel []int32, d transform.Dest) error {
	return w.dec[o].Apply(w.s.outputs[o], chunks, w.constsOf(rg.File, o), int(rg.Rows), sel, d)
}

// constsOf is output o's partition columns' values in file f (nil: it has none, or f
// is not planned).
func (w *Worker) constsOf(f *dataset.File, o int) []*Const {
	if c := w.consts[f]; c != nil {
		return c[o]
	}
	return nil
}

// Arrays makes columns names of rg into Arrow arrays (Arrays.Columns), reading the
// chunks not read since Begin.
func (w *Worker) Arrays(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, names []string) ([]*arrow.Chunked, error) {
	return w.arrays.Columns(ctx, r, rg, names)
}
