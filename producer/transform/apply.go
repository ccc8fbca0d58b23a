package transform

import (
	"fmt"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// blockValues is how many values of one column a block holds: small enough that the
// scratch (about 13 KB) stays in L1 and a stacked block of the destination in L2, large
// enough that per-block work (finding chunks, switching on ops) is noise. Measured in
// one run of BenchmarkApplyStacked100's work at 128, 256, 512 and 1024 values: 512 was
// the fastest, 4-10 % ahead of 1024; a bare strided copy (BenchmarkTransposeFloor) was
// fastest at 128-256.
const blockValues = 512

var workPool = sync.Pool{New: func() any { return new(work) }}

// Dest says where Apply writes each tensor: row k of tensor i starts at byte
// k*Stride[i] of Bufs[i]. Row-major tensors have Stride[i] = the tensor's row size;
// serve's records put every tensor of a row side by side, one stride apart.
type Dest struct {
	Bufs   [][]byte
	Stride []int
}

// Apply transforms rows sel (row indices into cols, ascending; nil = all rows) of cols
// (one *arrow.Chunked per Columns(), same order, all of equal length) and writes them
// row-major into dst: dst[i] is tensor i's region for len(sel) rows (len(sel)*rowBytes(i)).
// A non-nil empty sel writes nothing. Safe for concurrent use by several goroutines
// (different cols/dst).
func (o *Output) Apply(cols []*arrow.Chunked, sel []int32, dst [][]byte) error {
	d := Dest{Bufs: dst, Stride: make([]int, len(dst))}
	for i := range dst {
		if i < len(o.tensors) {
			d.Stride[i] = o.rowBytes(i)
		}
	}
	return o.ApplyTo(cols, sel, d)
}

// ApplyTo is Apply with each tensor's rows stride bytes apart; the bytes between one
// row's end and the next row's start are left as they are.
func (o *Output) ApplyTo(cols []*arrow.Chunked, sel []int32, dst Dest) error {
	if len(cols) != len(o.cols) {
		return fmt.Errorf("output %q: %d columns given, want %d", o.name, len(cols), len(o.cols))
	}
	rows := 0
	for j, c := range cols {
		switch {
		case c == nil:
			return fmt.Errorf("output %q, column %q: missing", o.name, o.cols[j].src.name)
		case j == 0:
			rows = c.Len()
		case c.Len() != rows:
			return fmt.Errorf("output %q, column %q: %d rows, but column %q has %d",
				o.name, o.cols[j].src.name, c.Len(), o.cols[0].src.name, rows)
		}
	}
	n, err := o.checkDest(rows, sel, dst)
	if err != nil {
		return err
	}
	srcs := make([]colSource, len(cols))
	for j, c := range cols {
		r := &colReader{}
		if err := r.open(&o.cols[j].src, c, o.pad); err != nil {
			return fmt.Errorf("output %q, column %q: %w", o.name, o.cols[j].src.name, err)
		}
		srcs[j] = r
	}
	return o.run(srcs, n, sel, dst)
}

// checkDest checks sel against the rows and dst against the output, and returns the
// rows to write.
func (o *Output) checkDest(rows int, sel []int32, dst Dest) (int, error) {
	n := rows
	if sel != nil {
		n = len(sel)
		if err := checkSel(sel, rows); err != nil {
			return 0, fmt.Errorf("output %q: %w", o.name, err)
		}
	}
	if len(dst.Bufs) != len(o.tensors) || len(dst.Stride) != len(o.tensors) {
		return 0, fmt.Errorf("output %q: %d destination buffers and %d strides, want %d", o.name, len(dst.Bufs), len(dst.Stride), len(o.tensors))
	}
	for i, buf := range dst.Bufs {
		rb, st := o.rowBytes(i), dst.Stride[i]
		if st < rb {
			return 0, fmt.Errorf("output %q: tensor %q: rows %d bytes apart, but a row is %d bytes", o.name, o.tensors[i].Name, st, rb)
		}
		if n > 1 && st > (math.MaxInt-rb)/(n-1) {
			return 0, fmt.Errorf("output %q: tensor %q: %d rows %d bytes apart overflow", o.name, o.tensors[i].Name, n, st)
		}
		if need := (n-1)*st + rb; n > 0 && len(buf) < need {
			return 0, fmt.Errorf("output %q: tensor %q: %d bytes for %d rows %d bytes apart, want %d", o.name, o.tensors[i].Name, len(buf), n, st, need)
		}
	}
	return n, nil
}

// colSource yields one column's values, a block of rows at a time, in order.
type colSource interface {
	// read reads rows k0..k1-1 (of sel, or of the column) into w and reports nulls,
	// and done when the values are final: the column's ops were already applied.
	read(w *work, sel []int32, k0, k1 int) (nulls, done bool, err error)
}

// f32Source is a colSource that can hand out a block's float32 values as decoded, for
// the fused columns (fuseF32).
type f32Source interface {
	// f32Run returns rows k0..k1-1 as little-endian float32 values and null flags (nil:
	// no nulls), or false when they are not one run of plain float32 values.
	f32Run(k0, k1 int) (vals, null []byte, ok bool, err error)
}

// dictSource is a colSource that can hand out a block's dictionary indices as decoded
// (runDict, Output.storeDict).
type dictSource interface {
	// dictRun returns rows k0..k1-1 as dictionary indices and null flags (nil: no
	// nulls) with their dictionary, or false when they are not one run of indices.
	dictRun(k0, k1 int) (idx []uint32, null []byte, d *runDict, ok bool, err error)
}

// run is Apply's loop: for each block of n rows, each column's values are read, pass
// through the column's ops and are written to dst.
func (o *Output) run(srcs []colSource, n int, sel []int32, dst Dest) error {
	perRow := max(o.pad, 1)
	block := max(1, blockValues/perRow)
	w := workPool.Get().(*work)
	defer workPool.Put(w)
	w.grow(block*perRow, block)
	for k0 := 0; k0 < n; k0 += block {
		k1 := min(k0+block, n)
		for j := range o.cols {
			p := &o.cols[j]
			if ds, ok := srcs[j].(dictSource); ok && sel == nil && o.pad == 0 {
				idx, null, d, ok, err := ds.dictRun(k0, k1)
				if err != nil {
					return fmt.Errorf("output %q, column %q: %w", o.name, p.src.name, err)
				}
				if ok {
					o.storeDict(d, p, idx, null, dst, j, k0)
					continue
				}
			}
			if p.fuse.ok && sel == nil {
				if fs, ok := srcs[j].(f32Source); ok {
					vals, null, ok, err := fs.f32Run(k0, k1)
					if err != nil {
						return fmt.Errorf("output %q, column %q: %w", o.name, p.src.name, err)
					}
					if ok {
						rs := dst.Stride[0]
						p.fuse.store(dst.Bufs[0], k0*rs+j*4, rs, vals, null)
						continue
					}
				}
			}
			w.hash = p.hash
			nulls, done, err := srcs[j].read(w, sel, k0, k1)
			if err != nil {
				return fmt.Errorf("output %q, column %q: %w", o.name, p.src.name, err)
			}
			w.nulls = nulls
			for x := 0; x < len(p.ops) && !done; x++ {
				p.ops[x].run(w, (k1-k0)*perRow)
			}
			o.write(w, p, j, dst, k0, k1)
		}
	}
	return nil
}

// checkSel checks that sel ascends strictly inside 0..rows-1.
func checkSel(sel []int32, rows int) error {
	prev := int32(-1)
	for k, r := range sel {
		if r <= prev || int(r) >= rows {
			return fmt.Errorf("selected row %d is %d: want ascending rows in 0..%d", k, r, rows-1)
		}
		prev = r
	}
	return nil
}

func (w *work) grow(values, rows int) {
	if cap(w.f) < values {
		w.f, w.i = make([]float64, values), make([]int64, values)
		w.st, w.bits = make([]byte, values), make([]uint64, values)
	}
	w.f, w.i, w.st, w.bits = w.f[:values], w.i[:values], w.st[:values], w.bits[:values]
	if cap(w.lens) < rows {
		w.lens = make([]int32, rows)
	}
	w.lens = w.lens[:rows]
}

// colReader reads one column's chunks; cur is the chunk the last block ended in, as
// rows only move forward.
type colReader struct {
	chunks []chunkReader
	starts []int // row of each chunk's first value, then the total
	cur    int
}

func (r *colReader) open(s *source, c *arrow.Chunked, pad int) error {
	r.starts = append(r.starts, 0)
	for i, ch := range c.Chunks() {
		if !s.sameType(ch.DataType()) {
			return fmt.Errorf("chunk %d is %s, compiled for %s", i, ch.DataType(), s.typ)
		}
		cr, err := newReader(ch, pad, s.dec)
		if err != nil {
			return fmt.Errorf("chunk %d: %w", i, err)
		}
		r.chunks = append(r.chunks, cr)
		r.starts = append(r.starts, r.starts[len(r.starts)-1]+ch.Len())
	}
	return nil
}

// read reads rows k0..k1-1 (of sel, or of the column) into w and reports nulls.
func (r *colReader) read(w *work, sel []int32, k0, k1 int) (bool, bool, error) {
	c, nulls := r.cur, false
	if sel == nil {
		for row := k0; row < k1; {
			for row >= r.starts[c+1] {
				c++
			}
			hi := min(k1, r.starts[c+1])
			nulls = r.chunks[c].readRange(w, row-k0, row-r.starts[c], hi-r.starts[c]) || nulls
			row = hi
		}
	} else {
		for k := k0; k < k1; {
			for int(sel[k]) >= r.starts[c+1] {
				c++
			}
			e, end := k+1, r.starts[c+1]
			for e < k1 && int(sel[e]) < end {
				e++
			}
			nulls = r.chunks[c].gather(w, k-k0, sel[k:e], r.starts[c]) || nulls
			k = e
		}
	}
	r.cur = c
	return nulls, false, nil
}
