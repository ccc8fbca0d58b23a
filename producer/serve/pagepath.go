package serve

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/transform"
)

// pageWork is one worker's state for reading outputs straight from pages: a decoder
// set per output and the buffer the row group's chunks are read into, all reused.
type pageWork struct {
	state  []transform.PageState
	buf    []byte
	leaves map[*dataset.File][][]dataset.Leaf // per output, its columns' leaves; nil: not all flat
	// consts are, per file and output, the values of its partition columns (arrays of
	// one value; nil for the other columns, whose leaves have Index -1 there).
	consts map[*dataset.File][][]arrow.Array
}

func newPageWork(outputs int) *pageWork {
	return &pageWork{state: make([]transform.PageState, outputs), leaves: map[*dataset.File][][]dataset.Leaf{},
		consts: map[*dataset.File][][]arrow.Array{}}
}

// pagePlan says which outputs of row group rg are read from pages (the rest go through
// arrow-go), and the leaves of each.
func (s *source) pagePlan(pw *pageWork, rg dataset.RowGroup) [][]dataset.Leaf {
	if s.arrowOnly {
		return make([][]dataset.Leaf, len(s.outputs))
	}
	byOut, ok := pw.leaves[rg.File]
	if !ok {
		byOut = s.fileLeaves(pw, rg.File)
	}
	plan := make([][]dataset.Leaf, len(s.outputs))
	for o, ls := range byOut {
		if ls == nil {
			continue
		}
		readable := true
		for _, l := range ls {
			if l.Index >= 0 && rg.File.PagesReadable(rg.Index, l) != nil {
				readable = false
				break
			}
		}
		if readable {
			plan[o] = ls
		}
	}
	return plan
}

// fileLeaves finds, per output, the leaves of its columns in file f, or nil where some
// column is not flat or not of a type the page path reads; a partition column gets
// Index -1 and its value in pw.consts.
func (s *source) fileLeaves(pw *pageWork, f *dataset.File) [][]dataset.Leaf {
	byOut := make([][]dataset.Leaf, len(s.outputs))
	consts := make([][]arrow.Array, len(s.outputs))
	for o, out := range s.outputs {
		ls := make([]dataset.Leaf, 0, len(s.outCols[o]))
		for j, c := range s.outCols[o] {
			name := s.columns[c]
			if a, ok, err := s.ds.Constant(f, name, 1); ok {
				if err != nil || !out.ReadsConst(j, a.DataType()) {
					ls = nil
					break
				}
				if consts[o] == nil {
					consts[o] = make([]arrow.Array, len(s.outCols[o]))
				}
				consts[o][j] = a
				ls = append(ls, dataset.Leaf{Index: -1})
				continue
			}
			l, ok := f.Leaf(name)
			if !ok || l.MaxRep > 0 || !out.ReadsPages(j, l.Type, l.TypeLen) {
				ls = nil
				break
			}
			ls = append(ls, l)
		}
		byOut[o] = ls
	}
	if len(pw.leaves) >= leafFiles {
		clear(pw.leaves)
		clear(pw.consts)
	}
	pw.leaves[f], pw.consts[f] = byOut, consts
	return byOut
}

// leafFiles bounds how many files' leaves a worker keeps: a window's row groups come from
// a few files, and a dataset of 100,000 files must not keep them all (each file's leaves
// are a few KB per output).
const leafFiles = 64

// arrowColumns is the columns to read through arrow-go: the filter's and those of the
// outputs not read from pages (nil entries in plan).
func (s *source) arrowColumns(plan [][]dataset.Leaf) []bool {
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

// applyPages writes output o of rg from its chunks' pages.
func (s *source) applyPages(pw *pageWork, r *dataset.Reader, rg dataset.RowGroup, o int, ls []dataset.Leaf, sel []int32, d transform.Dest) error {
	chunks, err := s.pageChunks(pw, r, rg, o, ls)
	if err != nil {
		return err
	}
	return s.applyChunks(pw, rg, o, chunks, sel, d)
}

// pageChunks reads the chunks of output o's leaves ls in rg into pw.buf: one per leaf,
// in order, the zero Chunk for a partition column's (which has none).
func (s *source) pageChunks(pw *pageWork, r *dataset.Reader, rg dataset.RowGroup, o int, ls []dataset.Leaf) ([]pages.Chunk, error) {
	if pw.consts[rg.File][o] == nil {
		chunks, buf, err := r.ReadChunks(rg.Index, ls, pw.buf)
		pw.buf = buf
		return chunks, err
	}
	// Partition columns have no chunks: read the others', then put them in place.
	read := make([]dataset.Leaf, 0, len(ls))
	for _, l := range ls {
		if l.Index >= 0 {
			read = append(read, l)
		}
	}
	got, buf, err := r.ReadChunks(rg.Index, read, pw.buf)
	pw.buf = buf
	if err != nil {
		return nil, err
	}
	chunks := make([]pages.Chunk, len(ls))
	for j, k := 0, 0; j < len(ls); j++ {
		if ls[j].Index >= 0 {
			chunks[j] = got[k]
			k++
		}
	}
	return chunks, nil
}

// applyChunks writes output o of rg from chunks (pageChunks).
func (s *source) applyChunks(pw *pageWork, rg dataset.RowGroup, o int, chunks []pages.Chunk, sel []int32, d transform.Dest) error {
	if consts := pw.consts[rg.File][o]; consts != nil {
		return s.outputs[o].ApplyPagesConst(&pw.state[o], chunks, consts, int(rg.Rows), sel, d)
	}
	return s.outputs[o].ApplyPages(&pw.state[o], chunks, int(rg.Rows), sel, d)
}

// readArrow reads the columns marked in need (the others stay nil).
func readArrow(ctx context.Context, r *dataset.Reader, rg dataset.RowGroup, names []string, need []bool) ([]*arrow.Chunked, error) {
	var want []string
	for c, n := range need {
		if n {
			want = append(want, names[c])
		}
	}
	cols := make([]*arrow.Chunked, len(names))
	if len(want) == 0 {
		return cols, nil
	}
	got, err := r.ReadRowGroup(ctx, rg.Index, want)
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
