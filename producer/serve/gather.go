package serve

import (
	"unsafe"

	"github.com/shmloader/shmloader/ring"
)

// gather copies rows [from, to) of w, in serving order, into the slot's tensors starting
// at batch row at: the one copy between decoded (or cached) rows and the trainer.
func (s *server) gather(slot *ring.Slot, w *window, from, to int64, at int) {
	if w.order == nil {
		s.gatherRuns(slot, w, from, to, at)
		return
	}
	order := w.order[from:to]
	n := len(order)
	bases := make([]unsafe.Pointer, len(w.blocks))
	for t, sz := range s.src.rowSize {
		dst := slot.Tensor(t)[at*sz : (at+n)*sz]
		for b := range w.blocks {
			bases[b] = unsafe.Pointer(unsafe.SliceData(w.blocks[b].tensors[t]))
		}
		switch sz {
		case 4:
			gather4(dst, bases, order)
		case 8:
			gather8(dst, bases, order)
		default:
			for i, o := range order {
				copy(dst[i*sz:(i+1)*sz], w.blocks[o.b].tensors[t][int(o.l)*sz:int(o.l+1)*sz])
			}
		}
	}
}

// gatherRuns copies rows [from, to) of a window whose rows keep their order: one run per
// block it spans.
func (s *server) gatherRuns(slot *ring.Slot, w *window, from, to int64, at int) {
	for b := range w.blocks {
		lo, hi := max(from, w.starts[b]), min(to, w.starts[b]+w.blocks[b].rows)
		if lo >= hi {
			continue
		}
		n := int(hi - lo)
		for t, sz := range s.src.rowSize {
			src := w.blocks[b].tensors[t][int(lo-w.starts[b])*sz:]
			copy(slot.Tensor(t)[at*sz:(at+n)*sz], src[:n*sz])
		}
		at += n
	}
}

// gather4 and gather8 move one element per row without copy's call overhead. Blocks'
// and slots' tensors are 4- and 8-byte aligned (the ring places tensors at 256-byte
// boundaries; buffer sets and cache entries at 64-byte ones).
// bases[b] is the tensor's data in block b; order's rows are within their blocks (the
// window's own permutation).
func gather4(dst []byte, bases []unsafe.Pointer, order []loc) {
	d := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/4)
	for i, o := range order {
		d[i] = *(*uint32)(unsafe.Add(bases[o.b], uintptr(o.l)*4))
	}
}

func gather8(dst []byte, bases []unsafe.Pointer, order []loc) {
	d := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/8)
	for i, o := range order {
		d[i] = *(*uint64)(unsafe.Add(bases[o.b], uintptr(o.l)*8))
	}
}
