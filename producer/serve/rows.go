package serve

import "unsafe"

// rowLayout places every tensor of a row side by side: a block holds each kept row as
// one record of stride bytes, tensor t at offset off[t]. A gather then touches one place
// per row, not one per tensor: rows are taken in a random order, and each place is a
// cache and TLB miss (measured on the bench's 5 tensors: 12 M rows/s against 2 M).
type rowLayout struct {
	size   []int // bytes per row of each tensor
	off    []int // offset of each tensor in a record, 8-byte aligned
	stride int   // bytes per record, a multiple of 8
}

func newRowLayout(size []int) rowLayout {
	l := rowLayout{size: size, off: make([]int, len(size))}
	for t, n := range size {
		l.off[t] = l.stride
		l.stride += (n + 7) &^ 7 // 8-byte elements stay aligned (the gathers load them whole)
	}
	l.stride = max(l.stride, 8)
	return l
}

// interleave copies per-tensor, row-major columns of rows rows into records, one
// record after another: each record is written whole, once, from sequential reads of
// the columns (a pass per tensor would pull the whole block through the cache again).
func (l rowLayout) interleave(dst []byte, cols [][]byte, rows int64) {
	n := int(rows)
	if n == 0 {
		return
	}
	_ = dst[n*l.stride-1] // bounds: every record is inside dst
	src := make([]unsafe.Pointer, len(cols))
	for t, c := range cols {
		_ = c[n*l.size[t]-1] // and every column holds rows rows
		src[t] = unsafe.Pointer(unsafe.SliceData(c))
	}
	base := unsafe.Pointer(unsafe.SliceData(dst))
	for r := range n {
		rec := unsafe.Add(base, r*l.stride)
		for t, sz := range l.size {
			d, s := unsafe.Add(rec, l.off[t]), unsafe.Add(src[t], r*sz)
			switch sz {
			case 4:
				*(*uint32)(d) = *(*uint32)(s)
			case 8:
				*(*uint64)(d) = *(*uint64)(s)
			default:
				copy(unsafe.Slice((*byte)(d), sz), unsafe.Slice((*byte)(s), sz))
			}
		}
	}
}
