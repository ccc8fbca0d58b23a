package pages

import (
	"encoding/binary"
	"unsafe"
)

// plainReader reads PLAIN values: fixed-width little-endian values back to back,
// booleans one bit each (least significant first), byte arrays each after a 4-byte
// little-endian length.
type plainReader struct {
	b       []byte
	pos     int // next byte (booleans: next bit is bit)
	bit     int
	typ     physical
	typeLen int
}

func (p *plainReader) reset(b []byte, t physical, typeLen int) {
	*p = plainReader{b: b, typ: t, typeLen: typeLen}
}

func (p *plainReader) read(d *Decoder, out *Values, n int) error {
	if p.typ == tBool {
		if n > len(p.b)*8-p.bit {
			return corrupt("PLAIN booleans: %d wanted, %d bits left", n, len(p.b)*8-p.bit)
		}
		for k := range out.Bool[:n] {
			out.Bool[k] = p.b[p.bit>>3] >> (p.bit & 7) & 1
			p.bit++
		}
		return nil
	}
	if p.typ == tByteArray {
		for k := range n {
			if len(p.b)-p.pos < 4 {
				return corrupt("PLAIN byte array %d of %d: length cut short", k, n)
			}
			l := binary.LittleEndian.Uint32(p.b[p.pos:])
			p.pos += 4
			if uint64(l) > uint64(len(p.b)-p.pos) {
				return corrupt("PLAIN byte array %d of %d: %d bytes, %d left in the page", k, n, l, len(p.b)-p.pos)
			}
			end := p.pos + int(l)
			out.Bin[k] = p.b[p.pos:end:end]
			p.pos = end
		}
		return nil
	}
	w := width(p.typ, p.typeLen)
	if n > (len(p.b)-p.pos)/w {
		return corrupt("PLAIN: %d values of %d bytes wanted, %d bytes left", n, w, len(p.b)-p.pos)
	}
	src := p.b[p.pos : p.pos+n*w]
	p.pos += n * w
	if n == 0 {
		return nil
	}
	if d != nil && d.Raw && !out.HasNull && p.typ != tInt96 && p.typ != tFixed {
		out.Raw = src[: n*w : n*w]
		return nil
	}
	switch p.typ {
	case tInt32:
		copy(asBytes(out.I32[:n]), src)
	case tInt64:
		copy(asBytes(out.I64[:n]), src)
	case tFloat:
		copy(asBytes(out.F32[:n]), src)
	case tDouble:
		copy(asBytes(out.F64[:n]), src)
	case tInt96:
		copy(asBytes(out.I96[:n]), src)
	case tFixed:
		for k := range n {
			out.Bin[k] = src[k*w : (k+1)*w : (k+1)*w]
		}
	}
	return nil
}

// finish: a page's PLAIN values fill its values section exactly (booleans: to the byte).
func (p *plainReader) finish() error {
	left := len(p.b) - p.pos
	if p.typ == tBool {
		left = len(p.b) - (p.bit+7)/8
	}
	if left != 0 {
		return corrupt("PLAIN values end %d bytes before the page does", left)
	}
	return nil
}

// asBytes views a slice of fixed-width values as its bytes (the host is little-endian,
// as Parquet is: amd64 and arm64).
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}
