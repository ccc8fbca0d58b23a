package pages

// maxExpanded bounds the bytes a DELTA_BYTE_ARRAY page may expand to. A value shares a
// prefix of the one before, so a small page can describe far more bytes than it holds;
// beyond this bound the page is refused rather than allocated.
const maxExpanded = 1 << 31

// deltaByteArrayReader reads DELTA_BYTE_ARRAY values: every value's prefix length (bytes
// it shares with the value before) as a DELTA_BINARY_PACKED stream, then the suffixes as
// DELTA_LENGTH_BYTE_ARRAY. A value with a suffix is built in buf; one without is a view
// of the value before. buf is sized once per page, at reset, from a first pass over the
// lengths, so views handed out stay valid until the next page starts.
type deltaByteArrayReader struct {
	prefix  deltaInts
	suffix  deltaLengthReader
	typeLen int // FIXED_LEN_BYTE_ARRAY: every value's length; 0 for BYTE_ARRAY

	pre  []int32
	buf  []byte // the page's values that have a suffix, back to back
	used int
	prev []byte // the value read last
}

func (r *deltaByteArrayReader) reset(b []byte, typeLen, most int) error {
	end, err := r.prefix.reset(b, true, most)
	if err != nil {
		return corrupt("DELTA_BYTE_ARRAY prefix lengths: %v", err)
	}
	if err := r.suffix.reset(b[end:], most); err != nil {
		return corrupt("DELTA_BYTE_ARRAY suffixes: %v", err)
	}
	if r.prefix.total != r.suffix.lens.total {
		return corrupt("DELTA_BYTE_ARRAY: %d prefix lengths but %d suffixes", r.prefix.total, r.suffix.lens.total)
	}
	r.typeLen = typeLen
	size, err := r.measure()
	if err != nil {
		return err
	}
	r.buf = growTo(r.buf, size)
	r.used, r.prev = 0, nil
	return nil
}

// measure checks every value's lengths against the value before and the suffix bytes,
// and returns the bytes of the values that have a suffix.
func (r *deltaByteArrayReader) measure() (int, error) {
	p, s := r.prefix, r.suffix.lens // copies: the readers stay at the first value
	var pc, sc [256]int32
	size, prev, data := 0, 0, len(r.suffix.data)
	for i := 0; p.left > 0; {
		m := min(p.left, len(pc))
		if err := deltaRead(&p, pc[:m]); err != nil {
			return 0, corrupt("DELTA_BYTE_ARRAY prefix lengths: %v", err)
		}
		if err := deltaRead(&s, sc[:m]); err != nil {
			return 0, corrupt("DELTA_BYTE_ARRAY suffix lengths: %v", err)
		}
		for k := range m {
			pl, sl := int(pc[k]), int(sc[k])
			if pl < 0 || pl > prev {
				return 0, corrupt("DELTA_BYTE_ARRAY: value %d has a prefix of %d bytes, the value before %d bytes", i, pl, prev)
			}
			if sl < 0 || sl > data {
				return 0, corrupt("DELTA_BYTE_ARRAY: value %d has a suffix of %d bytes, %d left in the page", i, sl, data)
			}
			data -= sl
			prev = pl + sl
			if r.typeLen > 0 && prev != r.typeLen {
				return 0, corrupt("DELTA_BYTE_ARRAY: value %d has %d bytes in a column of width %d", i, prev, r.typeLen)
			}
			if sl > 0 {
				size += prev
				if size > maxExpanded {
					return 0, unsupported("DELTA_BYTE_ARRAY page expands to over %d bytes", maxExpanded)
				}
			}
			i++
		}
	}
	if data != 0 {
		return 0, corrupt("DELTA_BYTE_ARRAY: %d bytes follow the last suffix", data)
	}
	return size, nil
}

func (r *deltaByteArrayReader) read(_ *Decoder, out *Values, n int) error {
	done := r.prefix.total - r.prefix.left
	r.pre = growTo(r.pre, n)
	if err := deltaRead(&r.prefix, r.pre); err != nil {
		return corrupt("DELTA_BYTE_ARRAY prefix lengths: %v", err)
	}
	dst := out.Bin[:n]
	if err := r.suffix.next(dst); err != nil {
		return corrupt("DELTA_BYTE_ARRAY suffixes: %v", err)
	}
	// measure checked all this; the checks stay so that no input can make a view go
	// out of range.
	prev := r.prev
	for k, suf := range dst {
		p := int(r.pre[k])
		if p < 0 || p > len(prev) {
			return corrupt("DELTA_BYTE_ARRAY: value %d has a prefix of %d bytes, the value before %d bytes", done+k, p, len(prev))
		}
		l := p + len(suf)
		if r.typeLen > 0 && l != r.typeLen {
			return corrupt("DELTA_BYTE_ARRAY: value %d has %d bytes in a column of width %d", done+k, l, r.typeLen)
		}
		if len(suf) == 0 {
			prev = prev[:p:p]
		} else {
			if l > len(r.buf)-r.used {
				return corrupt("DELTA_BYTE_ARRAY: value %d of %d bytes overflows the page's %d", done+k, l, len(r.buf))
			}
			v := r.buf[r.used : r.used+l : r.used+l]
			copy(v, prev[:p])
			copy(v[p:], suf)
			r.used += l
			prev = v
		}
		dst[k] = prev
	}
	r.prev = prev
	return nil
}

func (r *deltaByteArrayReader) finish() error {
	if r.prefix.left != 0 {
		return corrupt("DELTA_BYTE_ARRAY: the page's rows take %d of the header's %d values", r.prefix.total-r.prefix.left, r.prefix.total)
	}
	return nil // measure checked that the suffixes end with the section
}
