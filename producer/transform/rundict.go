package transform

import (
	"cmp"
	"errors"
	"fmt"
	"unsafe"
)

// runDict is a Runs source's dictionary in the form Apply's blocks take: raw holds each
// entry as read (ops not yet applied), final the same after the column's ops; entry n
// (one past the dictionary) is the null row. Both are made once per dictionary, so a
// transform costs one evaluation per distinct value.
type runDict struct {
	from       Runs   // the source these were made from
	gen        uint64 // its dictionary's number then
	made       bool
	n          int
	raw, final work
	idx        []uint32 // the block's entries, per position
	// bits: each final entry as the output stores it (Output.storeDict), made once per
	// dictionary when bitsGen is gen+1.
	bits    []uint64
	bitsGen uint64
}

// load (re)makes the dictionary's entries when the source's dictionary changed, and
// says whether it did.
func (d *runDict) load(p *runSource) (bool, error) {
	v, gen := p.runs.Dictionary()
	if d.made && gen == d.gen && d.from == p.runs {
		return false, nil
	}
	if err := v.check(v.N, p.kind); err != nil || v.Dict || v.Raw != nil {
		return false, fmt.Errorf("dictionary: %w", cmp.Or(err, errors.New("of indices or raw bytes")))
	}
	n := v.N
	d.n, d.gen, d.from, d.made = n, gen, p.runs, true
	d.raw.grow(n+1, 1)
	d.raw.hash = p.plan.hash
	if n > 0 {
		p.put(&d.raw, v, 0, n, 0, nil, 0)
	}
	// The null entry, as put makes a null row.
	d.raw.f[n], d.raw.i[n], d.raw.st[n] = 0, 0, stNull
	if h := p.plan.hash; h != nil && h.filled {
		d.raw.i[n], d.raw.st[n] = h.fill, stValid
	}
	d.final.grow(n+1, 1)
	copy(d.final.f, d.raw.f[:n+1])
	copy(d.final.i, d.raw.i[:n+1])
	copy(d.final.st, d.raw.st[:n+1])
	d.final.hash = p.plan.hash
	d.final.nulls = d.final.st[n] != stValid
	for x := range p.plan.ops {
		p.plan.ops[x].run(&d.final, n+1)
	}
	return true, nil
}

// indices records the entries of n rows of run v for positions at..: the run's rows
// lo..lo+n-1, or rows idx[i] (the run's idx[i]-base); a null row gets entry n.
func (d *runDict) indices(v *Values, at, n, lo int, idx []int32, base int) {
	if need := at + n; len(d.idx) < need {
		d.idx = append(d.idx, make([]uint32, need-len(d.idx))...)
	}
	out := d.idx[at : at+n]
	null := uint32(d.n)
	if idx == nil {
		copy(out, v.Idx[lo:lo+n])
		if v.HasNull {
			for i, b := range v.Null[lo : lo+n] {
				if b != 0 {
					out[i] = null
				}
			}
		}
		return
	}
	for i, r := range idx {
		x := int(r) - base
		out[i] = v.Idx[x]
		if v.HasNull && v.Null[x] != 0 {
			out[i] = null
		}
	}
}

// lookup puts the entries of positions at..at+n-1 into w: final values when final (the
// whole block came from the dictionary, so the ops are skipped), else raw ones. k is
// the kind of the values taken (the plan's last, or the source's). It reports nulls.
func (d *runDict) lookup(w *work, at, n int, final bool, finalKind, srcKind kind) bool {
	src, k := &d.raw, srcKind
	if final {
		src, k = &d.final, finalKind
	}
	idx := d.idx[at : at+n]
	st := w.st[at : at+n]
	if k == kFloat {
		f := w.f[at : at+n]
		for i, x := range idx {
			f[i] = src.f[x]
		}
	} else {
		iv := w.i[at : at+n]
		for i, x := range idx {
			iv[i] = src.i[x]
		}
	}
	var any byte
	for i, x := range idx {
		st[i] = src.st[x]
		any |= st[i]
	}
	return any != 0
}

// storeDict stores rows of one run of dictionary indices (idx; a nonzero null[k] marks a
// null row, null may be nil) straight from d's final entries, as column j of rows k0..
// of a stacked tensor: the bits Output.write stores for a block that came from the
// dictionary, one load and one store per row.
func (o *Output) storeDict(d *runDict, p *colPlan, idx []uint32, null []byte, dst Dest, j, k0 int) {
	if d.bitsGen != d.gen+1 {
		n := d.n + 1
		if cap(d.bits) < n {
			d.bits = make([]uint64, n)
		}
		d.bits = d.bits[:n]
		nulls := d.final.nulls
		d.final.nulls = true // every entry's state is looked at
		o.bitsOf(&d.final, p.kind, d.bits, 0)
		d.final.nulls = nulls
		d.bitsGen = d.gen + 1
	}
	bits, nullEntry := d.bits, uint32(d.n)
	size, rs := o.dtype.Size(), dst.Stride[0]
	off := k0*rs + j*size
	if len(idx) == 0 {
		return
	}
	if null != nil {
		null = null[:len(idx)]
	}
	_ = dst.Bufs[0][off+(len(idx)-1)*rs+size-1] // one bounds check for the block
	base := unsafe.Pointer(unsafe.SliceData(dst.Bufs[0]))
	entry := func(k int, x uint32) uint64 {
		if null != nil && null[k] != 0 {
			x = nullEntry
		}
		return bits[x]
	}
	switch size {
	case 8:
		for k, x := range idx {
			*(*uint64)(unsafe.Add(base, off+k*rs)) = entry(k, x)
		}
	case 4:
		for k, x := range idx {
			*(*uint32)(unsafe.Add(base, off+k*rs)) = uint32(entry(k, x))
		}
	case 2:
		for k, x := range idx {
			*(*uint16)(unsafe.Add(base, off+k*rs)) = uint16(entry(k, x))
		}
	default:
		for k, x := range idx {
			*(*uint8)(unsafe.Add(base, off+k*rs)) = uint8(entry(k, x))
		}
	}
}
