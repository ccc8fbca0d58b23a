package transform

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// runSource feeds one column's values to Apply from a Runs: it holds the last run the
// source gave (rows base..base+v.N-1). Runs of dictionary indices are looked up in the
// dictionary as transformed once (dict): the column's ops then run once per distinct
// value, not once per row.
type runSource struct {
	runs Runs
	plan *colPlan
	kind ValueKind
	v    Values
	base int // row of v's first value
	rows int // rows in the column
	dict runDict
	seg  []segment // the block's pieces, for read
	// loaded: the dictionary was loaded since open; from then on it must not change.
	loaded bool
}

// segment is a piece of a block that came from one run: positions at..at+n-1 of the
// block; dictionary indices in dict.idx there when dict, else values already in w.
type segment struct {
	at, n int
	dict  bool
}

func (p *runSource) open(c *colPlan, col Column, rows int) error {
	if !c.src.reads(col.Kind) {
		return fmt.Errorf("cannot read %s values as %s", col.Kind, c.src.typ)
	}
	p.runs, p.plan, p.kind, p.base, p.rows = col.Runs, c, col.Kind, 0, rows
	p.v.N, p.loaded = 0, false
	return nil
}

// fetch makes row r part of the held run.
func (p *runSource) fetch(r int) error {
	for r >= p.base+p.v.N {
		p.base += p.v.N
		p.v.N = 0
		if err := p.runs.Next(min(blockValues, p.rows-p.base), &p.v); err != nil {
			return err
		}
		if p.v.N <= 0 || p.v.N > p.rows-p.base {
			return fmt.Errorf("a run of %d rows at row %d of %d", p.v.N, p.base, p.rows)
		}
		if err := p.v.check(p.v.N, p.kind); err != nil {
			return fmt.Errorf("the run at row %d: %w", p.base, err)
		}
	}
	return nil
}

// read reads rows k0..k1-1 (of sel, or of the column) into w. It reports nulls, and
// done when the values are final (the column's ops already applied): when every row of
// the block came from dictionary runs.
func (p *runSource) read(w *work, sel []int32, k0, k1 int) (nulls, done bool, err error) {
	p.seg = p.seg[:0]
	for k := k0; k < k1; {
		r := k
		if sel != nil {
			r = int(sel[k])
		}
		if err := p.fetch(r); err != nil {
			return false, false, err
		}
		e, end := k+1, p.base+p.v.N
		var idx []int32
		if sel == nil {
			e = min(k1, end)
		} else {
			for e < k1 && int(sel[e]) < end {
				e++
			}
			idx = sel[k:e]
		}
		lo := r - p.base // the run's index of row r
		if p.v.Dict {
			if err := p.loadDict(); err != nil {
				return false, false, err
			}
			p.dict.indices(&p.v, k-k0, e-k, lo, idx, p.base)
		} else {
			nulls = p.put(w, &p.v, k-k0, e-k, lo, idx, p.base) || nulls
		}
		p.seg = append(p.seg, segment{at: k - k0, n: e - k, dict: p.v.Dict})
		k = e
	}
	allDict := true
	for _, s := range p.seg {
		allDict = allDict && s.dict
	}
	for _, s := range p.seg {
		if s.dict {
			nulls = p.dict.lookup(w, s.at, s.n, allDict, p.plan.kind, p.plan.src.readKind()) || nulls
		}
	}
	return nulls, allDict, nil
}

// loadDict makes the dictionary the held run's indices point into: the one loaded
// before, since open.
func (p *runSource) loadDict() error {
	changed, err := p.dict.load(p)
	if err != nil {
		return err
	}
	if changed && p.loaded {
		return fmt.Errorf("the dictionary changed at row %d", p.base)
	}
	p.loaded = true
	return nil
}

// f32Run is f32Source's: the held run's values when rows k0..k1-1 lie in one run of
// float32 values (not dictionary indices), as stored (Raw) or as decoded.
func (p *runSource) f32Run(k0, k1 int) ([]byte, []byte, bool, error) {
	if p.kind != Float32Values {
		return nil, nil, false, nil
	}
	if err := p.fetch(k0); err != nil {
		return nil, nil, false, err
	}
	v := &p.v
	if v.Dict || k1 > p.base+v.N {
		return nil, nil, false, nil
	}
	lo, hi := k0-p.base, k1-p.base
	var null []byte
	if v.HasNull {
		null = v.Null[lo:hi]
	}
	if v.Raw != nil {
		return v.Raw[4*lo : 4*hi], null, true, nil
	}
	f := v.F32[lo:hi]
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f)), null, true, nil
}

// dictRun is dictSource's: the held run's dictionary indices and null flags when rows
// k0..k1-1 lie in one run of them, with the dictionary made (load).
func (p *runSource) dictRun(k0, k1 int) ([]uint32, []byte, *runDict, bool, error) {
	if err := p.fetch(k0); err != nil {
		return nil, nil, nil, false, err
	}
	v := &p.v
	if !v.Dict || k1 > p.base+v.N {
		return nil, nil, nil, false, nil
	}
	if err := p.loadDict(); err != nil {
		return nil, nil, nil, false, err
	}
	lo, hi := k0-p.base, k1-p.base
	var null []byte
	if v.HasNull {
		null = v.Null[lo:hi]
	}
	return v.Idx[lo:hi], null, &p.dict, true, nil
}

// put converts n values of run v to w at positions at..: the run's values lo..lo+n-1,
// or, when idx is set, rows idx[i] (the run's values idx[i]-base).
func (p *runSource) put(w *work, v *Values, at, n, lo int, idx []int32, base int) bool {
	from := lo
	if idx != nil {
		from = base
	}
	st := w.st[at : at+n]
	nulls := false
	if v.HasNull {
		if idx == nil {
			copy(st, v.Null[from:from+n])
		} else {
			for i, r := range idx {
				st[i] = v.Null[int(r)-from]
			}
		}
		for _, b := range st {
			if b != 0 {
				nulls = true
				break
			}
		}
	} else {
		clear(st)
	}
	fi, ii := w.f[at:at+n], w.i[at:at+n]
	if v.Raw != nil {
		putRaw(p.kind, fi, ii, v.Raw, from, idx)
		return nulls
	}
	switch p.kind {
	case Int32Values, Int8Values, Int16Values, Uint8Values, Uint16Values, Uint32Values:
		c := p.kind
		toInts(ii, v.I32, from, idx, func(x int32) int64 { return narrowI32(c, x) })
	case Int64Values:
		if idx == nil {
			copy(ii, v.I64[from:from+n])
			break
		}
		toInts(ii, v.I64, from, idx, func(x int64) int64 { return x })
	case BoolValues:
		toInts(ii, v.Bool, from, idx, func(x byte) int64 { return int64(x) })
	case Float32Values:
		if idx == nil { // the hot case, without the call per value toInts makes
			for i, x := range v.F32[from : from+n] {
				fi[i] = float64(x)
			}
			break
		}
		toInts(fi, v.F32, from, idx, func(x float32) float64 { return float64(x) })
	case Float64Values:
		if idx == nil {
			copy(fi, v.F64[from:from+n])
			break
		}
		toInts(fi, v.F64, from, idx, func(x float64) float64 { return x })
	case Float16Values:
		toInts(fi, v.Bin, from, idx, func(x []byte) float64 {
			if len(x) < 2 {
				return 0 // a null row
			}
			return fromF16(uint16(x[0]) | uint16(x[1])<<8)
		})
	case BytesValues:
		return p.putStrings(w, v, at, from, n, idx, nulls)
	case DaysValues:
		toInts(ii, v.I32, from, idx, func(x int32) int64 { return int64(x) * 86400000 })
	case DecimalInt32Values, DecimalInt64Values, Decimal128Values, Decimal256Values:
		p.putDecimals(w, v, at, from, n, idx)
	}
	return nulls
}

// putDecimals converts decimals as the column is read (decInfo). A stored value of a
// length its kind does not hold reads as 0: the source refuses such values where a
// row uses them (colsrc does, as arrow-go does).
func (p *runSource) putDecimals(w *work, v *Values, at, from, n int, idx []int32) {
	dec := &p.plan.src.dec
	most := 16
	if p.kind == Decimal256Values {
		most = 32
	}
	var buf [4]uint64
	for i := range n {
		r := from + i
		if idx != nil {
			r = int(idx[i]) - from
		}
		switch p.kind {
		case DecimalInt32Values:
			dec.putInt64(w, at+i, int64(v.I32[r]))
		case DecimalInt64Values:
			dec.putInt64(w, at+i, v.I64[r])
		default:
			b := v.Bin[r]
			switch {
			case w.st[at+i] != stValid || len(b) < 1 || len(b) > most:
				w.i[at+i], w.f[at+i] = 0, 0
			case len(b) <= 8:
				dec.putInt64(w, at+i, beInt64(b))
			default:
				dec.put(w, at+i, beWords(b, &buf))
			}
		}
	}
}

// beInt64 is a big-endian two's complement integer of 1 to 8 bytes.
func beInt64(b []byte) int64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	sh := 64 - 8*uint(len(b))
	return int64(v<<sh) >> sh
}

// putStrings hashes strings as strChunk does: fill_null's string first, nulls stay 0.
func (p *runSource) putStrings(w *work, v *Values, at, from, n int, idx []int32, nulls bool) bool {
	h := w.hash
	for i := range n {
		r := from + i
		if idx != nil {
			r = int(idx[i]) - from
		}
		switch {
		case !nulls || w.st[at+i] == stValid:
			w.i[at+i] = h.bucket(unsafeString(v.Bin[r]))
		case h.filled:
			w.i[at+i], w.st[at+i] = h.fill, stValid
		default:
			w.i[at+i] = 0
		}
	}
	return nulls && !h.filled
}

// putRaw converts values stored as little-endian bytes (Values.Raw): raw[from+i], or
// raw[idx[i]-from], into fi (floats) or ii (integers).
func putRaw(k ValueKind, fi []float64, ii []int64, raw []byte, from int, idx []int32) {
	at := func(i int) int {
		if idx == nil {
			return from + i
		}
		return int(idx[i]) - from
	}
	switch k {
	case Float32Values:
		if idx == nil && len(fi) > 0 {
			// One bounds check for the run, then straight loads: the hot case.
			p := unsafe.Pointer(unsafe.SliceData(raw[4*from : 4*(from+len(fi))]))
			for i := range fi {
				fi[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(p, 4*i))[:])))
			}
			return
		}
		for i := range fi {
			fi[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*at(i):])))
		}
	case Float64Values:
		for i := range fi {
			fi[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*at(i):]))
		}
	case Int64Values:
		if idx == nil && len(ii) > 0 {
			p := unsafe.Pointer(unsafe.SliceData(raw[8*from : 8*(from+len(ii))]))
			for i := range ii {
				ii[i] = int64(binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, 8*i))[:]))
			}
			return
		}
		for i := range ii {
			ii[i] = int64(binary.LittleEndian.Uint64(raw[8*at(i):]))
		}
	default: // the int32 kinds
		for i := range ii {
			ii[i] = narrowI32(k, int32(binary.LittleEndian.Uint32(raw[4*at(i):])))
		}
	}
}

// narrowI32 is an int32 value as kind k reads it.
func narrowI32(k ValueKind, x int32) int64 {
	switch k {
	case Int8Values:
		return int64(int8(x))
	case Int16Values:
		return int64(int16(x))
	case Uint8Values:
		return int64(uint8(x))
	case Uint16Values:
		return int64(uint16(x))
	case Uint32Values:
		return int64(uint32(x))
	}
	return int64(x)
}

// toInts converts src values (src[from+i], or src[idx[i]-from]) into dst.
func toInts[S, D any](dst []D, src []S, from int, idx []int32, f func(S) D) {
	if idx == nil {
		for i, x := range src[from : from+len(dst)] {
			dst[i] = f(x)
		}
		return
	}
	for i, r := range idx {
		dst[i] = f(src[int(r)-from])
	}
}

// unsafeString views b as a string for hashing; b is not changed while it is used.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
