package pages

import "encoding/binary"

// bssReader reads BYTE_STREAM_SPLIT values: the page's N values of w bytes are stored as
// w streams of N bytes, stream j holding byte j of every value, so N is the section's
// size over w and value i gathers byte i of each stream. FIXED_LEN_BYTE_ARRAY values are
// gathered into buf, sized once per page, which out.Bin views.
type bssReader struct {
	b    []byte
	typ  physical
	w    int // bytes per value
	n    int // values in the page
	next int // the next value
	buf  []byte
}

func (r *bssReader) reset(b []byte, t physical, typeLen, most int) error {
	w := width(t, typeLen)
	if len(b)%w != 0 {
		return corrupt("BYTE_STREAM_SPLIT: a %d-byte values section is not a whole number of %d-byte values", len(b), w)
	}
	n := len(b) / w
	if n > most {
		return corrupt("BYTE_STREAM_SPLIT: %d values in a page of %d", n, most)
	}
	r.b, r.typ, r.w, r.n, r.next = b, t, w, n, 0
	if t == tFixed {
		r.buf = growTo(r.buf, len(b))
	}
	return nil
}

func (r *bssReader) read(_ *Decoder, out *Values, n int) error {
	if n > r.n-r.next {
		return corrupt("BYTE_STREAM_SPLIT: %d values wanted, %d of the page's %d left", n, r.n-r.next, r.n)
	}
	if n == 0 {
		return nil
	}
	i := r.next
	r.next += n
	switch r.typ {
	case tInt32:
		gather4(asBytes(out.I32[:n]), r.b, r.n, i)
	case tFloat:
		gather4(asBytes(out.F32[:n]), r.b, r.n, i)
	case tInt64:
		gather8(asBytes(out.I64[:n]), r.b, r.n, i)
	case tDouble:
		gather8(asBytes(out.F64[:n]), r.b, r.n, i)
	case tFixed:
		w := r.w
		dst := r.buf[i*w : (i+n)*w]
		for j := range w {
			for k, c := range r.b[j*r.n+i : j*r.n+i+n] {
				dst[k*w+j] = c
			}
		}
		for k := range n {
			out.Bin[k] = dst[k*w : (k+1)*w : (k+1)*w]
		}
	}
	return nil
}

// gather4 sets dst to the 4-byte values i.. of streams b of n bytes each.
func gather4(dst, b []byte, n, i int) {
	m := len(dst) / 4
	s0, s1, s2, s3 := b[i:i+m], b[n+i:n+i+m], b[2*n+i:2*n+i+m], b[3*n+i:3*n+i+m]
	for k := range s0 {
		v := uint32(s0[k]) | uint32(s1[k])<<8 | uint32(s2[k])<<16 | uint32(s3[k])<<24
		binary.LittleEndian.PutUint32(dst[4*k:], v)
	}
}

// gather8 sets dst to the 8-byte values i.. of streams b of n bytes each.
func gather8(dst, b []byte, n, i int) {
	m := len(dst) / 8
	var s [8][]byte
	for j := range s {
		s[j] = b[j*n+i : j*n+i+m]
	}
	for k := range s[0] {
		v := uint64(s[0][k]) | uint64(s[1][k])<<8 | uint64(s[2][k])<<16 | uint64(s[3][k])<<24 |
			uint64(s[4][k])<<32 | uint64(s[5][k])<<40 | uint64(s[6][k])<<48 | uint64(s[7][k])<<56
		binary.LittleEndian.PutUint64(dst[8*k:], v)
	}
}

// finish: the page's rows take every value of the section.
func (r *bssReader) finish() error {
	if r.next != r.n {
		return corrupt("BYTE_STREAM_SPLIT: the page's rows take %d of its %d values", r.next, r.n)
	}
	return nil
}
