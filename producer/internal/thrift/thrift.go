// Package thrift reads (and, for footers that are edited, writes back) the Thrift compact
// protocol that Parquet's page headers and footers are written in. It is the one reader
// of that protocol in the producer: package pages streams page headers through Reader,
// package dataset reads a footer as a tree of Values to check or change it.
//
// Every read is bounded by the bytes at hand and by a nesting limit, and a container's
// count is checked against the bytes left before anything is allocated for it: no input
// makes it loop, allocate more than its input's size, or panic. Every failure is
// ErrMalformed; callers say what was malformed (a page header, a footer).
package thrift

import (
	"encoding/binary"
	"errors"
)

// ErrMalformed: the bytes are not a value of the protocol (cut short, a count past the
// bytes left, an unknown type code, nesting past MaxDepth).
var ErrMalformed = errors.New("malformed Thrift compact protocol")

// Type is a compact-protocol type code, as a field header or a container header holds
// it. A boolean field carries its value in its type (True, False); a boolean inside a
// container is one byte.
type Type byte

// Compact-protocol type codes.
const (
	Stop Type = iota
	True
	False
	Byte
	I16
	I32
	I64
	Double
	Binary
	List
	Set
	Map
	Struct
)

// MaxDepth bounds the nesting of structs and containers (a footer needs about 8).
const MaxDepth = 32

// Reader reads values from b, a position at a time.
type Reader struct {
	b   []byte
	pos int
}

// NewReader reads b from its start.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Pos is the offset of the next byte to read.
func (r *Reader) Pos() int { return r.pos }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, ErrMalformed
	}
	r.pos++
	return r.b[r.pos-1], nil
}

// Uvarint reads an unsigned LEB128 varint of at most 64 bits.
func (r *Reader) Uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		return 0, ErrMalformed
	}
	r.pos += n
	return v, nil
}

// I32 reads a zigzag varint that fits in 32 bits (an i32, or an i16 or a byte's worth).
func (r *Reader) I32() (int32, error) {
	u, err := r.Uvarint()
	if err != nil || u > 0xffffffff {
		return 0, ErrMalformed
	}
	return Unzigzag32(u), nil
}

// Binary reads a length-prefixed byte string; it views the reader's bytes.
func (r *Reader) Binary() ([]byte, error) {
	n, err := r.Uvarint()
	if err != nil {
		return nil, err
	}
	start := r.pos
	if err := r.advance(n); err != nil {
		return nil, err
	}
	return r.b[start:r.pos:r.pos], nil
}

func (r *Reader) advance(n uint64) error {
	if n > uint64(len(r.b)-r.pos) {
		return ErrMalformed
	}
	r.pos += int(n)
	return nil
}

// FieldHeader reads the header of a struct's next field, whose id follows last (the
// previous field's id, 0 for the first); typ Stop ends the struct.
func (r *Reader) FieldHeader(last int16) (id int16, typ Type, err error) {
	h, err := r.Byte()
	if err != nil || h == 0 {
		return 0, Stop, err
	}
	typ = Type(h & 0x0f)
	if d := int16(h >> 4); d != 0 {
		return last + d, typ, nil
	}
	u, err := r.Uvarint()
	if err != nil || u > 0xffff {
		return 0, Stop, ErrMalformed
	}
	return int16(uint16(u>>1)) ^ -int16(u&1), typ, nil
}

// ListHeader reads a list's or set's header: its element type and count. Every element
// takes at least a byte, so a count past the bytes left is refused here, before a caller
// sizes anything by it.
func (r *Reader) ListHeader() (n int, elem Type, err error) {
	h, err := r.Byte()
	if err != nil {
		return 0, Stop, err
	}
	u, elem := uint64(h>>4), Type(h&0x0f)
	if u == 15 {
		if u, err = r.Uvarint(); err != nil {
			return 0, Stop, err
		}
	}
	if u > uint64(len(r.b)-r.pos) {
		return 0, Stop, ErrMalformed
	}
	return int(u), elem, nil
}

// mapHeader reads a map's header: its entry count and key and value types.
func (r *Reader) mapHeader() (n int, key, val Type, err error) {
	u, err := r.Uvarint()
	if err != nil || u == 0 {
		return 0, Stop, Stop, err
	}
	kv, err := r.Byte()
	if err != nil || u > uint64(len(r.b)-r.pos) { // an entry takes two bytes at least
		return 0, Stop, Stop, ErrMalformed
	}
	return int(u), Type(kv >> 4), Type(kv & 0x0f), nil
}

// Skip reads past one value of type typ (a field's type: True and False are no bytes).
func (r *Reader) Skip(typ Type) error {
	return r.skip(typ, 0)
}

func (r *Reader) skip(typ Type, depth int) error {
	if depth > MaxDepth && typ >= List {
		return ErrMalformed
	}
	switch typ {
	case True, False:
		return nil
	case Byte:
		return r.advance(1)
	case I16, I32, I64:
		_, err := r.Uvarint()
		return err
	case Double:
		return r.advance(8)
	case Binary:
		_, err := r.Binary()
		return err
	case List, Set:
		n, elem, err := r.ListHeader()
		if err != nil {
			return err
		}
		return r.skipN(n, depth, inContainer(elem))
	case Map:
		n, key, val, err := r.mapHeader()
		if err != nil {
			return err
		}
		return r.skipN(n, depth, inContainer(key), inContainer(val))
	case Struct:
		for last := int16(0); ; {
			id, t, err := r.FieldHeader(last)
			if err != nil || t == Stop {
				return err
			}
			if err := r.skip(t, depth+1); err != nil {
				return err
			}
			last = id
		}
	}
	return ErrMalformed
}

// skipN skips n elements, each a value of every type in types (a map entry is two).
func (r *Reader) skipN(n, depth int, types ...Type) error {
	for ; n > 0; n-- {
		for _, t := range types {
			if err := r.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// inContainer is how an element of type t is stored in a container: booleans as a byte.
func inContainer(t Type) Type {
	if t == True || t == False {
		return Byte
	}
	return t
}

// Unzigzag32 decodes a zigzag-encoded 32-bit value.
func Unzigzag32(u uint64) int32 { return int32(uint32(u>>1)) ^ -int32(u&1) }

// Zigzag32 encodes v as a zigzag varint.
func Zigzag32(v int32) uint64 { return uint64(uint32(v<<1 ^ v>>31)) }
