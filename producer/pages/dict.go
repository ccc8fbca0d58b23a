package pages

// dictReader reads RLE_DICTIONARY (and PLAIN_DICTIONARY) indices: one byte of bit
// width, then the hybrid encoding. Unless the Decoder yields indices, each index is
// replaced by its dictionary entry.
type dictReader struct {
	h hybrid
}

func (r *dictReader) reset(b []byte, entries int) error {
	if len(b) == 0 {
		r.h.reset(nil, 0, uint32(entries))
		return nil // a page whose rows are all null may hold no index at all
	}
	if b[0] > 32 {
		return corrupt("dictionary indices of bit width %d", b[0])
	}
	r.h.reset(b[1:], uint(b[0]), uint32(min(entries, 1<<32-1)))
	return nil
}

func (r *dictReader) read(d *Decoder, out *Values, n int) error {
	idx := out.Idx[:n]
	if err := r.h.read(idx); err != nil {
		return corrupt("dictionary indices: %v", err)
	}
	if d.Indices {
		return nil
	}
	dict := &d.dict
	switch d.typ {
	case tBool:
		gather(out.Bool, dict.Bool, idx)
	case tInt32:
		gather(out.I32, dict.I32, idx)
	case tInt64:
		gather(out.I64, dict.I64, idx)
	case tInt96:
		gather(out.I96, dict.I96, idx)
	case tFloat:
		gather(out.F32, dict.F32, idx)
	case tDouble:
		gather(out.F64, dict.F64, idx)
	case tByteArray, tFixed:
		gather(out.Bin, dict.Bin, idx)
	}
	return nil
}

// finish: the indices are as many as the page's non-null rows (hybrid.end).
func (r *dictReader) finish() error {
	if err := r.h.end(); err != nil {
		return corrupt("dictionary indices: %v", err)
	}
	return nil
}

// gather sets dst[k] = dict[idx[k]]; every index was checked against the dictionary's
// size as it was decoded.
func gather[T any](dst, dict []T, idx []uint32) {
	dst = dst[:len(idx)]
	for k, i := range idx {
		dst[k] = dict[i]
	}
}

// rleBoolReader reads booleans in the RLE encoding (data page v2): a 4-byte length, then
// the hybrid encoding at bit width 1.
type rleBoolReader struct {
	h   hybrid
	tmp []uint32
}

func (r *rleBoolReader) reset(b []byte) error {
	if len(b) < 4 {
		return corrupt("RLE booleans: length cut short")
	}
	n := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	if uint64(n) > uint64(len(b)-4) {
		return corrupt("RLE booleans: %d bytes in a %d-byte values section", n, len(b)-4)
	}
	r.h.reset(b[4:4+n], 1, 2)
	return nil
}

func (r *rleBoolReader) read(_ *Decoder, out *Values, n int) error {
	r.tmp = growTo(r.tmp, n)
	if err := r.h.read(r.tmp); err != nil {
		return corrupt("RLE booleans: %v", err)
	}
	for k, v := range r.tmp {
		out.Bool[k] = byte(v)
	}
	return nil
}

// finish: the booleans are as many as the page's non-null rows (hybrid.end).
func (r *rleBoolReader) finish() error {
	if err := r.h.end(); err != nil {
		return corrupt("RLE booleans: %v", err)
	}
	return nil
}
