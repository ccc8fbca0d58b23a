package serve

import (
	"unsafe"

	"github.com/shmloader/shmloader/ring"
)

// gather copies rows [sp.From, sp.To) of w, in serving order, into the slot's tensors
// starting at batch row at: the one copy between decoded data and the trainer.
func (s *server) gather(slot *ring.Slot, w *window, from, to int64, at int) {
	n := int(to - from)
	var order []int32
	if w.perm != nil {
		order = w.perm[from:to]
	}
	for t, sz := range s.src.rowSize {
		dst := slot.Tensor(t)[at*sz : (at+n)*sz]
		src := w.bufs[t]
		if order == nil {
			copy(dst, src[int(from)*sz:int(to)*sz])
			continue
		}
		switch sz {
		case 4:
			gather4(dst, src, order)
		case 8:
			gather8(dst, src, order)
		default:
			for i, r := range order {
				copy(dst[i*sz:(i+1)*sz], src[int(r)*sz:int(r+1)*sz])
			}
		}
	}
}

// gather4 and gather8 move one element per row without copy's call overhead. The
// windows' and slots' tensors are 4- and 8-byte aligned (the ring places tensors at
// 256-byte boundaries and make([]byte) is 8-aligned).
func gather4(dst, src []byte, order []int32) {
	d := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/4)
	s := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/4)
	for i, r := range order {
		d[i] = s[r]
	}
}

func gather8(dst, src []byte, order []int32) {
	d := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/8)
	s := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/8)
	for i, r := range order {
		d[i] = s[r]
	}
}
