package transform

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/shmloader/shmloader/producer/pages"
)

// conv is how a column's Parquet physical values become its Arrow type's values, the
// way arrow-go's reader converts them, so both paths give the same bytes.
type conv uint8

const (
	cvNone   conv = iota
	cvI32         // INT32 → int32 (and the narrower ints below, which it holds in range)
	cvI8          // INT32 → int8
	cvI16         // INT32 → int16
	cvU8          // INT32 → uint8
	cvU16         // INT32 → uint16
	cvU32         // INT32 → uint32
	cvI64         // INT64 → int64, or uint64's bits
	cvF32         // FLOAT
	cvF64         // DOUBLE
	cvF16         // FIXED_LEN_BYTE_ARRAY(2) → float16
	cvBool        // BOOLEAN
	cvStr         // BYTE_ARRAY → string or binary (hashed as read)
	cvDate64      // INT32 days → date64 ms
	cvI96         // INT96 → timestamp ns
	cvDecI32      // INT32 → decimal
	cvDecI64      // INT64 → decimal
	cvDec128      // FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY, big-endian → decimal128
	cvDec256      // the same → decimal256
)

// convFor is the conversion from physical type p (of width typeLen) to the column's
// Arrow type, cvNone when the page path does not read that pair.
func convFor(s *source, p parquet.Type, typeLen int) conv {
	if s.list {
		return cvNone
	}
	switch s.typ.ID() {
	case arrow.DATE32, arrow.TIME32:
		if p == parquet.Types.Int32 {
			return cvI32
		}
	case arrow.DATE64:
		if p == parquet.Types.Int32 {
			return cvDate64
		}
	case arrow.TIME64:
		if p == parquet.Types.Int64 {
			return cvI64
		}
	case arrow.TIMESTAMP:
		switch {
		case p == parquet.Types.Int64:
			return cvI64
		case p == parquet.Types.Int96 && s.tm.unit == 1:
			return cvI96
		}
	case arrow.DECIMAL128, arrow.DECIMAL256:
		switch {
		case p == parquet.Types.Int32:
			return cvDecI32
		case p == parquet.Types.Int64:
			return cvDecI64
		case p != parquet.Types.ByteArray && p != parquet.Types.FixedLenByteArray:
		case s.typ.ID() == arrow.DECIMAL128:
			return cvDec128
		default:
			return cvDec256
		}
	case arrow.DICTIONARY:
		if s.dict && p == parquet.Types.ByteArray {
			return cvStr
		}
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		if p != parquet.Types.Int32 {
			return cvNone
		}
		return map[arrow.Type]conv{arrow.INT8: cvI8, arrow.INT16: cvI16, arrow.INT32: cvI32,
			arrow.UINT8: cvU8, arrow.UINT16: cvU16, arrow.UINT32: cvU32}[s.typ.ID()]
	case arrow.INT64, arrow.UINT64:
		if p == parquet.Types.Int64 {
			return cvI64
		}
	case arrow.FLOAT32:
		if p == parquet.Types.Float {
			return cvF32
		}
	case arrow.FLOAT64:
		if p == parquet.Types.Double {
			return cvF64
		}
	case arrow.FLOAT16:
		if p == parquet.Types.FixedLenByteArray && typeLen == 2 {
			return cvF16
		}
	case arrow.BOOL:
		if p == parquet.Types.Boolean {
			return cvBool
		}
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		if p == parquet.Types.ByteArray {
			return cvStr
		}
	}
	return cvNone
}

// ReadsPages says whether column j of the output (in Columns() order) can be read
// from pages of physical type p and width typeLen with ApplyPages.
func (o *Output) ReadsPages(j int, p parquet.Type, typeLen int) bool {
	return j >= 0 && j < len(o.cols) && o.pad == 0 && convFor(&o.cols[j].src, p, typeLen) != cvNone
}

// pageSource feeds one column's values to Apply from a page decoder: it holds the last
// run the decoder gave (rows base..base+v.N-1). Runs of dictionary indices are looked
// up in the dictionary as transformed once (dict): the column's ops then run once per
// distinct value, not once per row.
type pageSource struct {
	dec  *pages.Decoder
	plan *colPlan
	conv conv
	v    pages.Values
	base int // row of v's first value
	rows int // rows in the chunk
	dict pageDict
	seg  []segment // the block's pieces, for read
}

// segment is a piece of a block that came from one run: positions at..at+n-1 of the
// block; dictionary indices in dict.idx there when dict, else values already in w.
type segment struct {
	at, n int
	dict  bool
}

func (p *pageSource) open(c *colPlan, dec *pages.Decoder, t parquet.Type, typeLen, rows int) error {
	if p.conv = convFor(&c.src, t, typeLen); p.conv == cvNone {
		return fmt.Errorf("cannot read %s pages of width %d as %s", t, typeLen, c.src.typ)
	}
	p.dec, p.plan, p.base, p.rows = dec, c, 0, rows
	p.v.N = 0
	dec.Indices = true
	dec.Raw = p.conv >= cvI32 && p.conv <= cvF64 // the conversions putRaw makes
	return nil
}

// fetch makes row r part of the held run.
func (p *pageSource) fetch(r int) error {
	for r >= p.base+p.v.N {
		p.base += p.v.N
		p.v.N = 0
		if _, err := p.dec.Read(min(blockValues, p.rows-p.base), &p.v); err != nil {
			return err
		}
		if p.conv == cvI96 || p.conv == cvDec128 || p.conv == cvDec256 {
			if err := p.checkRun(); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRun fails on a value of the held run that arrow-go refuses to read, whether a
// block asks for its row or not: arrow-go converts every value of a chunk. A dictionary
// entry fails only when a row uses it, as with arrow-go, which converts the rows.
func (p *pageSource) checkRun() error {
	v := &p.v
	if v.Dict {
		if err := p.dict.load(p); err != nil || !p.dict.bad {
			return err
		}
		for k, x := range v.Idx[:v.N] {
			if (!v.HasNull || v.Null[k] == 0) && p.dict.raw.st[x] == stBad {
				dv, _ := p.dec.Dictionary()
				return fmt.Errorf("row %d: %w", p.base+k, p.valueErr(dv, int(x)))
			}
		}
		return nil
	}
	for k := range v.N {
		if !v.HasNull || v.Null[k] == 0 {
			if err := p.valueErr(v, k); err != nil {
				return fmt.Errorf("row %d: %w", p.base+k, err)
			}
		}
	}
	return nil
}

// valueErr says why arrow-go would refuse value k of v, nil when it reads it.
func (p *pageSource) valueErr(v *pages.Values, k int) error {
	switch p.conv {
	case cvI96:
		if _, ok := int96ToNanos(v.I96[k]); !ok {
			return fmt.Errorf("INT96 timestamp %x is outside the int64 nanoseconds from 1970 (or its nanoseconds of the day pass a day)", v.I96[k][:])
		}
	case cvDec128:
		return decimalBytes(len(v.Bin[k]), 16)
	case cvDec256:
		return decimalBytes(len(v.Bin[k]), 32)
	}
	return nil
}

// read reads rows k0..k1-1 (of sel, or of the column) into w. It reports nulls, and
// done when the values are final (the column's ops already applied): when every row of
// the block came from dictionary runs.
func (p *pageSource) read(w *work, sel []int32, k0, k1 int) (nulls, done bool, err error) {
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
			if err := p.dict.load(p); err != nil {
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
			nulls = p.dict.lookup(w, s.at, s.n, allDict, p.plan.kind, p.plan.src.kind) || nulls
		}
	}
	return nulls, allDict, nil
}

// f32Run is f32Source's: the held run's values when rows k0..k1-1 lie in one run of
// FLOAT values (not dictionary indices), as stored (Raw) or as decoded.
func (p *pageSource) f32Run(k0, k1 int) ([]byte, []byte, bool, error) {
	if p.conv != cvF32 {
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
// k0..k1-1 lie in one run of them, with the dictionary made (load). A dictionary with
// an entry arrow-go refuses is left to read, which says which row uses it.
func (p *pageSource) dictRun(k0, k1 int) ([]uint32, []byte, *pageDict, bool, error) {
	if err := p.fetch(k0); err != nil {
		return nil, nil, nil, false, err
	}
	v := &p.v
	if !v.Dict || k1 > p.base+v.N {
		return nil, nil, nil, false, nil
	}
	if err := p.dict.load(p); err != nil || p.dict.bad {
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
func (p *pageSource) put(w *work, v *pages.Values, at, n, lo int, idx []int32, base int) bool {
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
		putRaw(p.conv, fi, ii, v.Raw, from, idx)
		return nulls
	}
	switch p.conv {
	case cvI32, cvI8, cvI16, cvU8, cvU16, cvU32:
		c := p.conv
		toInts(ii, v.I32, from, idx, func(x int32) int64 { return narrowI32(c, x) })
	case cvI64:
		if idx == nil {
			copy(ii, v.I64[from:from+n])
			break
		}
		toInts(ii, v.I64, from, idx, func(x int64) int64 { return x })
	case cvBool:
		toInts(ii, v.Bool, from, idx, func(x byte) int64 { return int64(x) })
	case cvF32:
		if idx == nil { // the hot case, without the call per value toInts makes
			for i, x := range v.F32[from : from+n] {
				fi[i] = float64(x)
			}
			break
		}
		toInts(fi, v.F32, from, idx, func(x float32) float64 { return float64(x) })
	case cvF64:
		if idx == nil {
			copy(fi, v.F64[from:from+n])
			break
		}
		toInts(fi, v.F64, from, idx, func(x float64) float64 { return x })
	case cvF16:
		toInts(fi, v.Bin, from, idx, func(x []byte) float64 {
			if len(x) < 2 {
				return 0 // a null row
			}
			return fromF16(uint16(x[0]) | uint16(x[1])<<8)
		})
	case cvStr:
		return p.putStrings(w, v, at, from, n, idx, nulls)
	case cvDate64:
		toInts(ii, v.I32, from, idx, func(x int32) int64 { return int64(x) * 86400000 })
	case cvI96:
		toInts(ii, v.I96, from, idx, int96Nanos)
		return p.checkInt96(w, v, at, from, n, idx) || nulls
	case cvDecI32, cvDecI64, cvDec128, cvDec256:
		return p.putDecimals(w, v, at, from, n, idx) || nulls
	}
	return nulls
}

// int96Nanos is an INT96 timestamp (nanoseconds of the day, then the Julian day) as
// nanoseconds since 1970, as arrow-go's Int96.ToTimestamp computes it; ok is false
// where that fails (checkInt96 reports those values).
func int96Nanos(x pages.Int96) int64 {
	v, _ := int96ToNanos(x)
	return v
}

func int96ToNanos(x pages.Int96) (int64, bool) {
	const julianUnixEpoch = 2440588
	nanos := binary.LittleEndian.Uint64(x[:8])
	if nanos >= uint64(nsPerDay) {
		return 0, false
	}
	days := int64(binary.LittleEndian.Uint32(x[8:])) - julianUnixEpoch
	maxDays := int64(math.MaxInt64) / nsPerDay
	if days > maxDays || days == maxDays && int64(nanos) > math.MaxInt64%nsPerDay {
		return 0, false
	}
	minDays := int64(math.MinInt64) / nsPerDay
	minNanos := nsPerDay + math.MinInt64%nsPerDay
	if days < minDays {
		if days != minDays-1 || int64(nanos) < minNanos {
			return 0, false
		}
		return math.MinInt64 + int64(nanos) - minNanos, true
	}
	return days*nsPerDay + int64(nanos), true
}

// checkInt96 marks the valid rows whose INT96 value arrow-go refuses (stBad), and
// reports whether there is one.
func (p *pageSource) checkInt96(w *work, v *pages.Values, at, from, n int, idx []int32) bool {
	bad := false
	for i := range n {
		r := from + i
		if idx != nil {
			r = int(idx[i]) - from
		}
		if w.st[at+i] == stValid && p.valueErr(v, r) != nil {
			w.st[at+i], bad = stBad, true
		}
	}
	return bad
}

// putDecimals converts decimals as the column is read (decInfo) and reports whether a
// valid row held a value arrow-go refuses (marked stBad).
func (p *pageSource) putDecimals(w *work, v *pages.Values, at, from, n int, idx []int32) bool {
	dec := &p.plan.src.dec
	most := 16
	if p.conv == cvDec256 {
		most = 32
	}
	var buf [4]uint64
	bad := false
	for i := range n {
		r := from + i
		if idx != nil {
			r = int(idx[i]) - from
		}
		switch p.conv {
		case cvDecI32:
			dec.putInt64(w, at+i, int64(v.I32[r]))
		case cvDecI64:
			dec.putInt64(w, at+i, v.I64[r])
		default:
			b := v.Bin[r]
			if w.st[at+i] != stValid {
				w.i[at+i], w.f[at+i] = 0, 0
				continue
			}
			if decimalBytes(len(b), most) != nil {
				w.st[at+i], bad = stBad, true
				continue
			}
			if len(b) <= 8 {
				dec.putInt64(w, at+i, beInt64(b))
			} else {
				dec.put(w, at+i, beWords(b, &buf))
			}
		}
	}
	return bad
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
func (p *pageSource) putStrings(w *work, v *pages.Values, at, from, n int, idx []int32, nulls bool) bool {
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

// putRaw converts values stored as PLAIN bytes (Decoder.Raw): raw[from+i], or
// raw[idx[i]-from], into fi (floats) or ii (integers).
func putRaw(c conv, fi []float64, ii []int64, raw []byte, from int, idx []int32) {
	at := func(i int) int {
		if idx == nil {
			return from + i
		}
		return int(idx[i]) - from
	}
	switch c {
	case cvF32:
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
	case cvF64:
		for i := range fi {
			fi[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*at(i):]))
		}
	case cvI64:
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
	default: // the INT32 conversions
		for i := range ii {
			ii[i] = narrowI32(c, int32(binary.LittleEndian.Uint32(raw[4*at(i):])))
		}
	}
}

// narrowI32 is an INT32 value as conversion c reads it.
func narrowI32(c conv, x int32) int64 {
	switch c {
	case cvI8:
		return int64(int8(x))
	case cvI16:
		return int64(int16(x))
	case cvU8:
		return int64(uint8(x))
	case cvU16:
		return int64(uint16(x))
	case cvU32:
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

// PageState is one goroutine's decoders and buffers for ApplyPages, one set per column,
// kept from row group to row group so that the steady state allocates nothing.
type PageState struct {
	cols []pageSource
	decs []pages.Decoder
	srcs []colSource
}

// ApplyPages is ApplyTo reading column j of the output from chunks[j], a column chunk of
// a row group of rows rows, through the page decoder: no Arrow array is built. Every
// column must be one ReadsPages accepts. All of each chunk is decoded and checked
// (Decoder.Finish), selected rows or not.
func (o *Output) ApplyPages(st *PageState, chunks []pages.Chunk, rows int, sel []int32, dst Dest) error {
	return o.applyPages(st, chunks, nil, rows, sel, dst)
}

func (o *Output) applyPages(st *PageState, chunks []pages.Chunk, consts []arrow.Array, rows int, sel []int32, dst Dest) error {
	if len(chunks) != len(o.cols) {
		return fmt.Errorf("output %q: %d columns given, want %d", o.name, len(chunks), len(o.cols))
	}
	n, err := o.checkDest(rows, sel, dst)
	if err != nil {
		return err
	}
	if len(st.cols) < len(chunks) {
		st.cols = make([]pageSource, len(chunks))
		st.decs = make([]pages.Decoder, len(chunks))
	}
	st.srcs = st.srcs[:0]
	for j, c := range chunks {
		p, s := &st.cols[j], &o.cols[j].src
		if consts != nil && consts[j] != nil {
			src, err := newConstSource(&o.cols[j], consts[j])
			if err != nil {
				return fmt.Errorf("output %q, column %q: %w", o.name, s.name, err)
			}
			st.srcs = append(st.srcs, src)
			continue
		}
		if err := st.decs[j].Reset(c); err != nil {
			return fmt.Errorf("output %q, column %q: %w", o.name, s.name, err)
		}
		if err := p.open(&o.cols[j], &st.decs[j], c.Type, c.TypeLen, rows); err != nil {
			return fmt.Errorf("output %q, column %q: %w", o.name, s.name, err)
		}
		st.srcs = append(st.srcs, p)
	}
	if err := o.run(st.srcs, n, sel, dst); err != nil {
		return err
	}
	for j := range chunks {
		if consts != nil && consts[j] != nil {
			continue
		}
		if err := st.cols[j].finish(); err != nil {
			return fmt.Errorf("output %q, column %q: %w", o.name, o.cols[j].src.name, err)
		}
	}
	return nil
}

// finish decodes the rows no block asked for, then checks the chunk's end.
func (p *pageSource) finish() error {
	if p.rows > 0 {
		if err := p.fetch(p.rows - 1); err != nil {
			return err
		}
	}
	return p.dec.Finish()
}
