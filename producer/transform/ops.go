package transform

import (
	"encoding/binary"
	"math"

	"github.com/shmloader/shmloader/ring"
)

// opCode is one compiled step. The kinds it reads and writes are fixed by Compile, so a
// step is a single loop with no per-value type switch.
type opCode uint8

const (
	opToFloat  opCode = iota // int → float64
	opUToFloat               // uint64 → float64
	opCastFF                 // float → float dtype dt
	opCastFI                 // float → integer dtype dt
	opCastIF                 // int (uint64 if unsigned) → float dtype dt
	opCastII                 // int → integer dtype dt
	opFillF                  // nulls → f
	opFillI                  // nulls → i
	opNorm                   // (x - f) / g
	opClipF                  // [f, g]
	opClipI                  // [i, j]
	opClipU                  // [i, j] as uint64
	opLog1p                  //
	opBucket                 // float → count of bounds <= x
	opHash                   // int → FNV-1a bucket
	opPadF                   // absent list positions → f
	opPadI                   // absent list positions → i
	opDatetime               // time counts → a part (tm)
)

type op struct {
	code     opCode
	dt       ring.DType
	unsigned bool
	f, g     float64
	i, j     int64
	bounds   []float64
	buckets  uint64
	seed     uint64 // FNV-1a state after the seed bytes
	tm       *timeOp
}

// run applies o to the first n values of w.
func (o *op) run(w *work, n int) {
	f, iv := w.f[:n], w.i[:n]
	switch o.code {
	case opToFloat:
		for k, v := range iv {
			f[k] = float64(v)
		}
	case opUToFloat:
		for k, v := range iv {
			f[k] = float64(uint64(v))
		}
	case opCastFF:
		for k, v := range f {
			f[k] = floatValue(o.dt, floatBits(o.dt, v))
		}
	case opCastFI:
		for k, v := range f {
			iv[k] = intValue(o.dt, floatBits(o.dt, v))
		}
	case opCastIF:
		for k, v := range iv {
			f[k] = floatValue(o.dt, intBits(o.dt, v, o.unsigned))
		}
	case opCastII:
		for k, v := range iv {
			iv[k] = intValue(o.dt, intBits(o.dt, v, false))
		}
	case opFillF, opFillI:
		if w.nulls {
			w.nulls = fill(o, w, n, stNull)
		}
	case opPadF, opPadI:
		if w.nulls {
			w.nulls = fill(o, w, n, stAbsent)
		}
	case opNorm:
		mean, std := o.f, o.g
		if frac, _ := math.Frexp(std); (frac == 0.5 || frac == -0.5) && !math.IsInf(1/std, 0) {
			// std is a power of two whose inverse is a float64: multiplying by 1/std is
			// exact, the same bits as dividing, and several times faster. (Below 2^-1023
			// the inverse overflows, and only dividing gives the quotient.)
			inv := 1 / std
			for k, v := range f {
				f[k] = (v - mean) * inv
			}
			break
		}
		subDiv(f, mean, std)
	case opClipF:
		lo, hi := o.f, o.g
		if lo != 0 && hi != 0 {
			// Branch-free. The builtins keep NaN, and differ from the loop below only
			// for a zero bound (max(-0, 0) is +0, where numpy's clip keeps -0).
			for k, v := range f {
				f[k] = min(max(v, lo), hi)
			}
			break
		}
		for k, v := range f {
			if v < lo {
				f[k] = lo
			} else if v > hi {
				f[k] = hi
			}
		}
	case opClipI:
		lo, hi := o.i, o.j
		for k, v := range iv {
			iv[k] = min(max(v, lo), hi)
		}
	case opClipU:
		lo, hi := uint64(o.i), uint64(o.j)
		for k, v := range iv {
			iv[k] = int64(min(max(uint64(v), lo), hi))
		}
	case opLog1p:
		for k, v := range f {
			f[k] = math.Log1p(v)
		}
	case opBucket:
		for k, v := range f {
			iv[k] = bucket(o.bounds, v)
		}
	case opHash:
		seed, n := o.seed, o.buckets
		for k, v := range iv {
			iv[k] = int64(fnvInt(seed, uint64(v)) % n)
		}
	case opDatetime:
		o.tm.run(w, n)
	}
}

// fill replaces the values in state s with the op's constant and reports whether any
// value is still null or absent. Nulls are usually rare: it skips 8 valid states at a
// time.
func fill(o *op, w *work, n int, s byte) bool {
	float := o.code == opFillF || o.code == opPadF
	st, left := w.st[:n], false
	for k := 0; k < n; k += 8 {
		if k+8 <= n && binary.LittleEndian.Uint64(st[k:]) == 0 {
			continue
		}
		for i := k; i < min(k+8, n); i++ {
			switch x := st[i]; {
			case x == s && float:
				w.f[i], st[i] = o.f, stValid
			case x == s:
				w.i[i], st[i] = o.i, stValid
			case x != stValid:
				left = true
			}
		}
	}
	return left
}

// bucket is numpy.searchsorted(bounds, v, side="right"), NaN sorting last.
func bucket(bounds []float64, v float64) int64 {
	if v != v {
		return int64(len(bounds))
	}
	lo, hi := 0, len(bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bounds[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return int64(lo)
}

func subDivGo(x []float64, mean, std float64) {
	for k, v := range x {
		x[k] = (v - mean) / std
	}
}
