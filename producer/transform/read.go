package transform

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

// Value states in work.st.
const (
	stValid  = 0
	stNull   = 1
	stAbsent = 2 // past the end of a list, until pad
	stBad    = 3 // pages: a value arrow-go refuses to read, an error if it is ever used
)

// work is one column's values for one block of rows, reused across blocks and calls.
type work struct {
	f     []float64
	i     []int64
	st    []byte
	bits  []uint64
	lens  []int32
	nulls bool     // some st is not stValid
	hash  *strHash // for string readers
}

// chunkReader reads one Arrow chunk into a work. readRange copies chunk values [lo, hi)
// to positions at.. of w; gather copies values sel[k]-base. Both report nulls.
type chunkReader interface {
	readRange(w *work, at, lo, hi int) bool
	gather(w *work, at int, sel []int32, base int) bool
}

// validity is a chunk's null bitmap; bm is nil when the chunk has no nulls.
type validity struct {
	bm  []byte
	off int
}

func validityOf(a arrow.Array) validity {
	if a.NullN() == 0 || len(a.NullBitmapBytes()) == 0 {
		return validity{}
	}
	return validity{a.NullBitmapBytes(), a.Data().Offset()}
}

func (v validity) rangeInto(st []byte, lo int) bool {
	if v.bm == nil {
		clear(st)
		return false
	}
	// A byte of the bitmap at a time where aligned: 8 valid values are one store.
	var seen byte
	pos, k := v.off+lo, 0
	for ; k < len(st) && (pos+k)%8 != 0; k++ {
		st[k] = byte(bit(v.bm, pos+k)) ^ 1
		seen |= st[k]
	}
	for ; k+8 <= len(st); k += 8 {
		b := v.bm[(pos+k)/8]
		if b == 0xff {
			binary.LittleEndian.PutUint64(st[k:], 0)
			continue
		}
		for i := range 8 {
			st[k+i] = b>>i&1 ^ 1
		}
		seen = 1
	}
	for ; k < len(st); k++ {
		st[k] = byte(bit(v.bm, pos+k)) ^ 1
		seen |= st[k]
	}
	return seen != 0
}

func (v validity) gatherInto(st []byte, sel []int32, base int) bool {
	if v.bm == nil {
		clear(st[:len(sel)])
		return false
	}
	nulls := false
	st = st[:len(sel)]
	for k, r := range sel {
		st[k] = stValid
		if bitutil.BitIsNotSet(v.bm, v.off+int(r)-base) {
			st[k], nulls = stNull, true
		}
	}
	return nulls
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intChunk reads integers; uint64 keeps its bits.
type intChunk[T integer] struct {
	vals []T
	v    validity
}

func (c intChunk[T]) readRange(w *work, at, lo, hi int) bool {
	dst := w.i[at : at+hi-lo]
	for k, x := range c.vals[lo:hi] {
		dst[k] = int64(x)
	}
	return c.v.rangeInto(w.st[at:at+hi-lo], lo)
}

func (c intChunk[T]) gather(w *work, at int, sel []int32, base int) bool {
	dst := w.i[at : at+len(sel)]
	for k, r := range sel {
		dst[k] = int64(c.vals[int(r)-base])
	}
	return c.v.gatherInto(w.st[at:], sel, base)
}

type floatChunk[T float32 | float64] struct {
	vals []T
	v    validity
}

func (c floatChunk[T]) readRange(w *work, at, lo, hi int) bool {
	dst := w.f[at : at+hi-lo]
	for k, x := range c.vals[lo:hi] {
		dst[k] = float64(x)
	}
	return c.v.rangeInto(w.st[at:at+hi-lo], lo)
}

func (c floatChunk[T]) gather(w *work, at int, sel []int32, base int) bool {
	dst := w.f[at : at+len(sel)]
	for k, r := range sel {
		dst[k] = float64(c.vals[int(r)-base])
	}
	return c.v.gatherInto(w.st[at:], sel, base)
}

type f16Chunk struct {
	vals []float16.Num
	v    validity
}

func (c f16Chunk) readRange(w *work, at, lo, hi int) bool {
	dst := w.f[at : at+hi-lo]
	for k, x := range c.vals[lo:hi] {
		dst[k] = fromF16(x.Uint16())
	}
	return c.v.rangeInto(w.st[at:at+hi-lo], lo)
}

func (c f16Chunk) gather(w *work, at int, sel []int32, base int) bool {
	dst := w.f[at : at+len(sel)]
	for k, r := range sel {
		dst[k] = fromF16(c.vals[int(r)-base].Uint16())
	}
	return c.v.gatherInto(w.st[at:], sel, base)
}

// boolChunk reads a bit-packed boolean as 0 or 1.
type boolChunk struct {
	bm  []byte
	off int
	v   validity
}

func (c boolChunk) readRange(w *work, at, lo, hi int) bool {
	dst := w.i[at : at+hi-lo]
	for k := range dst {
		dst[k] = bit(c.bm, c.off+lo+k)
	}
	return c.v.rangeInto(w.st[at:at+hi-lo], lo)
}

func (c boolChunk) gather(w *work, at int, sel []int32, base int) bool {
	dst := w.i[at : at+len(sel)]
	for k, r := range sel {
		dst[k] = bit(c.bm, c.off+int(r)-base)
	}
	return c.v.gatherInto(w.st[at:], sel, base)
}

func bit(bm []byte, i int) int64 { return int64(bm[uint(i)/8] >> (uint(i) % 8) & 1) }
