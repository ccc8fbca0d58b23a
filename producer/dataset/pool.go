package dataset

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// pool is the allocator of every Reader: an arrow memory.Allocator that recycles the
// large buffers decoding a row group needs (column chunks, values, offsets, bitmaps).
// The same sizes come back for every row group, and fresh memory from the Go heap costs
// page faults and zeroing at every row group, plus GC work; recycled buffers are warm.
// Buffers below 64 KiB go to the Go allocator.
var pool = &poolAllocator{}

const (
	minPooled = 16 // 64 KiB
	maxPooled = 32 // 4 GiB
	alignment = 64 // arrow's buffer alignment
)

type poolAllocator struct {
	classes [maxPooled + 1]sync.Pool // by log2 of the capacity
}

var _ memory.Allocator = (*poolAllocator)(nil)

func class(size int) int { return bits.Len(uint(size - 1)) }

// Allocate returns size zeroed bytes, 64-byte aligned. A pooled buffer's capacity is
// exactly its class size: Free recognizes it by that.
func (a *poolAllocator) Allocate(size int) []byte {
	c := class(size)
	if size <= 0 || c < minPooled || c > maxPooled {
		return memory.DefaultAllocator.Allocate(size)
	}
	if v, ok := a.classes[c].Get().(unsafe.Pointer); ok {
		b := unsafe.Slice((*byte)(v), 1<<c)
		clear(b[:size])
		return b[:size]
	}
	raw := make([]byte, 1<<c+alignment)
	off := 0
	if r := uintptr(unsafe.Pointer(&raw[0])) % alignment; r != 0 {
		off = int(alignment - r)
	}
	return raw[off : off+size : off+1<<c]
}

// Reallocate grows b in place when its capacity allows; the bytes past the old length
// are zeroed, as arrow expects of new memory.
func (a *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free recycles b if it is a pooled buffer (its capacity is a class size).
func (a *poolAllocator) Free(b []byte) {
	c := cap(b)
	if c == 0 || c&(c-1) != 0 || class(c) < minPooled || class(c) > maxPooled {
		return
	}
	a.classes[class(c)].Put(unsafe.Pointer(unsafe.SliceData(b[:1])))
}
