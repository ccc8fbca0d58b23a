package transform

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/shmloader/shmloader/ring"
)

// write converts column j's block (rows k0..k1-1) to the output dtype and stores it
// into its place in dst: column j of each row of a stacked tensor, the values of each
// row of a padded list (and their lengths).
func (o *Output) write(w *work, p *colPlan, j int, dst Dest, k0, k1 int) {
	size := o.dtype.Size()
	rs := dst.Stride[0]
	if o.pad == 0 {
		o.writeValues(w, p.kind, dst.Bufs[0], k0*rs+j*size, rs, 0, k1-k0)
		return
	}
	if !o.fixed {
		lens, ls := dst.Bufs[1], dst.Stride[1]
		for k, n := range w.lens[:k1-k0] {
			binary.LittleEndian.PutUint32(lens[(k0+k)*ls:], uint32(n))
		}
	}
	if rs == o.pad*size { // the rows' values are contiguous: one run
		o.writeValues(w, p.kind, dst.Bufs[0], k0*rs, size, 0, (k1-k0)*o.pad)
		return
	}
	for k := range k1 - k0 {
		o.writeValues(w, p.kind, dst.Bufs[0], (k0+k)*rs, size, k*o.pad, o.pad)
	}
}

// writeValues converts the block's values [from, from+nv) to the output dtype and
// stores them stride bytes apart from dst[off].
func (o *Output) writeValues(w *work, k kind, dst []byte, off, stride, from, nv int) {
	if o.writeFast(w, k, dst, off, stride, from, nv) {
		return
	}
	bits := w.bits[from : from+nv]
	o.bitsOf(w, k, bits, from)
	store(dst, off, stride, bits, o.dtype.Size())
}

// bitsOf converts the block's values [from, from+len(bits)) to the output dtype's bits;
// a null becomes nullBits.
func (o *Output) bitsOf(w *work, k kind, bits []uint64, from int) {
	nv := len(bits)
	if k == kFloat {
		floatsToBits(bits, w.f[from:from+nv], o.dtype)
	} else {
		intsToBits(bits, w.i[from:from+nv], o.dtype, k == kUint)
	}
	if w.nulls {
		nb := nullBits(o.dtype)
		for i, s := range w.st[from : from+nv] {
			if s != stValid {
				bits[i] = nb
			}
		}
	}
}

// writeFast converts and stores in one pass the common cases: floats to float32 or
// float64, integers to an integer type of 4 or 8 bytes. It reports false for the rest.
func (o *Output) writeFast(w *work, k kind, dst []byte, off, stride, from, nv int) bool {
	st, nulls := w.st[from:from+nv], w.nulls
	size := o.dtype.Size()
	fast := k == kFloat && (o.dtype == ring.Float32 || o.dtype == ring.Float64) ||
		k != kFloat && !isFloatDType(o.dtype) && (size == 4 || size == 8)
	if !fast {
		return false
	}
	if nv == 0 {
		return true
	}
	// One bounds check for the block; the stores then go through p.
	_ = dst[off+(nv-1)*stride+size-1]
	p := unsafe.Pointer(unsafe.SliceData(dst))
	switch {
	case k == kFloat && o.dtype == ring.Float32:
		for i, x := range w.f[from : from+nv] {
			f := float32(x)
			b := math.Float32bits(f)
			if f != f || nulls && st[i] != stValid {
				b = nanF32
			}
			binary.LittleEndian.PutUint32((*[4]byte)(unsafe.Add(p, off))[:], b)
			off += stride
		}
	case k == kFloat:
		for i, x := range w.f[from : from+nv] {
			b := math.Float64bits(x)
			if x != x || nulls && st[i] != stValid {
				b = nanF64
			}
			binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, off))[:], b)
			off += stride
		}
	case size == 8:
		for i, x := range w.i[from : from+nv] {
			if nulls && st[i] != stValid {
				x = 0
			}
			binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, off))[:], uint64(x))
			off += stride
		}
	default:
		for i, x := range w.i[from : from+nv] {
			if nulls && st[i] != stValid {
				x = 0
			}
			binary.LittleEndian.PutUint32((*[4]byte)(unsafe.Add(p, off))[:], uint32(x))
			off += stride
		}
	}
	return true
}

// nullBits is what a null becomes: NaN for floats, 0 for integers and bools.
func nullBits(d ring.DType) uint64 {
	switch d {
	case ring.Float64:
		return nanF64
	case ring.Float32:
		return nanF32
	case ring.Float16:
		return nanF16
	case ring.BFloat16:
		return nanBF16
	}
	return 0
}

func floatsToBits(bits []uint64, v []float64, d ring.DType) {
	bits = bits[:len(v)]
	switch d {
	case ring.Float32:
		for k, x := range v {
			f := float32(x)
			b := math.Float32bits(f)
			if f != f {
				b = nanF32
			}
			bits[k] = uint64(b)
		}
	case ring.Float64:
		for k, x := range v {
			b := math.Float64bits(x)
			if x != x {
				b = nanF64
			}
			bits[k] = b
		}
	default:
		for k, x := range v {
			bits[k] = floatBits(d, x)
		}
	}
}

func intsToBits(bits []uint64, v []int64, d ring.DType, unsigned bool) {
	bits = bits[:len(v)]
	if !isFloatDType(d) && d != ring.Bool {
		for k, x := range v {
			bits[k] = uint64(x)
		}
		return
	}
	for k, x := range v {
		bits[k] = intBits(d, x, unsigned)
	}
}

// store writes the low size bytes of each of bits, little-endian, stride bytes apart.
func store(dst []byte, off, stride int, bits []uint64, size int) {
	switch size {
	case 1:
		for _, b := range bits {
			dst[off] = byte(b)
			off += stride
		}
	case 2:
		for _, b := range bits {
			binary.LittleEndian.PutUint16(dst[off:], uint16(b))
			off += stride
		}
	case 4:
		for _, b := range bits {
			binary.LittleEndian.PutUint32(dst[off:], uint32(b))
			off += stride
		}
	default:
		for _, b := range bits {
			binary.LittleEndian.PutUint64(dst[off:], b)
			off += stride
		}
	}
}
