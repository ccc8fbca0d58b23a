package transform

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/shmloader/shmloader/ring"
)

// fuseF32 is ApplyRuns' one-pass form of the commonest column: float32 values
// through fill_null and normalize (either, both in either order, or none; casts to
// float32 anywhere) into a float32 tensor. Each value is converted, filled, normalized in float64, rounded and
// stored in one go, with the same bits as the steps one after the other (read, ops,
// write): a null becomes pre before normalize (fill_null first), post after it
// (fill_null last), or NaN without fill_null; a NaN result is stored as nanF32.
type fuseF32 struct {
	ok        bool
	norm      bool
	mean, std float64
	pre, post float64
	prefill   bool // a null takes pre and is normalized
}

// fuseFor is the fused form of p in output o, if it has one. It is used only on runs of
// float32 values (runSource.f32Run), so the values it takes are float32s.
func fuseFor(o *Output, p *colPlan) fuseF32 {
	f := fuseF32{post: math.NaN()}
	if o.dtype != ring.Float32 || o.pad != 0 || p.src.kind != kFloat || p.kind != kFloat {
		return fuseF32{}
	}
	filled := false
	for _, op := range p.ops {
		switch {
		case op.code == opFillF && !filled:
			filled = true
			if f.norm {
				f.post = op.f
			} else {
				f.pre, f.prefill = op.f, true
			}
		case op.code == opNorm && !f.norm:
			f.norm, f.mean, f.std = true, op.f, op.g
		case op.code == opCastFF && op.dt == ring.Float32:
			// Rounding to float32 changes only a fill value not yet normalized: the
			// source values are float32s, and a normalized value is rounded when stored.
			if f.prefill && !f.norm {
				f.pre = float64(float32(f.pre))
			}
		default:
			return fuseF32{}
		}
	}
	if !f.norm && f.prefill { // fill_null alone: the fill is the value stored
		f.post, f.prefill = f.pre, false
	}
	f.ok = true
	return f
}

// store writes the block's values (vals: little-endian float32s; a nonzero null[k]
// marks a null row, null may be nil) stride bytes apart from dst[off].
func (f *fuseF32) store(dst []byte, off, stride int, vals, null []byte) {
	n := len(vals) / 4
	if n == 0 {
		return
	}
	_ = dst[off+(n-1)*stride+3] // one bounds check for the block
	if null != nil {
		null = null[:n]
	}
	base := unsafe.Pointer(unsafe.SliceData(dst))
	done := fuseF32Asm(f, unsafe.Add(base, off), uintptr(stride), vals[:4*n], null)
	f.storeGo(base, off, stride, vals, null, done, n)
}

// storeGo is store for values from..to-1, one at a time.
func (f *fuseF32) storeGo(base unsafe.Pointer, off, stride int, vals, null []byte, from, to int) {
	for k := from; k < to; k++ {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(vals[4*k:])))
		isNull := null != nil && null[k] != 0
		if isNull && f.prefill {
			v = f.pre
		}
		if f.norm {
			v = (v - f.mean) / f.std
		}
		if isNull && !f.prefill {
			v = f.post
		}
		r := float32(v)
		b := math.Float32bits(r)
		if r != r {
			b = nanF32
		}
		*(*uint32)(unsafe.Add(base, off+k*stride)) = b
	}
}
