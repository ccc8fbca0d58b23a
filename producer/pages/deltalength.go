package pages

// deltaLengthReader reads DELTA_LENGTH_BYTE_ARRAY values: the lengths of all the page's
// values as one DELTA_BINARY_PACKED stream of INT32, then the values' bytes back to back.
// out.Bin views those bytes. It also reads the suffixes of DELTA_BYTE_ARRAY.
type deltaLengthReader struct {
	lens deltaInts
	data []byte // the values' bytes
	pos  int    // offset in data of the next value
	l    []int32
}

func (r *deltaLengthReader) reset(b []byte, most int) error {
	end, err := r.lens.reset(b, true, most)
	if err != nil {
		return corrupt("DELTA_LENGTH_BYTE_ARRAY lengths: %v", err)
	}
	r.data, r.pos = b[end:], 0
	return nil
}

func (r *deltaLengthReader) read(_ *Decoder, out *Values, n int) error {
	return r.next(out.Bin[:n])
}

// next sets dst to views of the next len(dst) values.
func (r *deltaLengthReader) next(dst [][]byte) error {
	done := r.lens.total - r.lens.left
	r.l = growTo(r.l, len(dst))
	if err := deltaRead(&r.lens, r.l); err != nil {
		return corrupt("DELTA_LENGTH_BYTE_ARRAY lengths: %v", err)
	}
	for k, l := range r.l {
		if l < 0 {
			return corrupt("DELTA_LENGTH_BYTE_ARRAY: value %d has length %d", done+k, l)
		}
		if int(l) > len(r.data)-r.pos {
			return corrupt("DELTA_LENGTH_BYTE_ARRAY: value %d of %d bytes, %d left in the page", done+k, l, len(r.data)-r.pos)
		}
		end := r.pos + int(l)
		dst[k] = r.data[r.pos:end:end]
		r.pos = end
	}
	return nil
}

// finish: the lengths are all read and their values fill the section exactly.
func (r *deltaLengthReader) finish() error {
	if r.lens.left != 0 {
		return corrupt("DELTA_LENGTH_BYTE_ARRAY: the page's rows take %d of the header's %d values", r.lens.total-r.lens.left, r.lens.total)
	}
	if r.pos != len(r.data) {
		return corrupt("DELTA_LENGTH_BYTE_ARRAY: %d bytes follow the last value", len(r.data)-r.pos)
	}
	return nil
}
