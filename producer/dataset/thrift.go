package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A small Thrift compact-protocol codec for footers: tvalue keeps a struct's fields and
// a list's items as a tree and every other value as its raw bytes, so that a footer can
// be read, changed field by field and written back (sanitizeFooter). Reading is bounded
// by the bytes at hand and a nesting limit: no input can make it loop or panic.

var errThrift = errors.New("malformed footer")

// Compact type codes.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

const thriftDepth = 32

// tfield is one field of a struct; for booleans the value is in typ (tTrue, tFalse).
type tfield struct {
	id  int16
	typ byte
	v   tvalue
}

// tvalue is a struct (fields), a list or set (elem, items) or anything else (raw).
type tvalue struct {
	fields []tfield
	elem   byte
	items  []tvalue
	raw    []byte
}

type treader struct {
	b   []byte
	pos int
}

func (r *treader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errThrift
	}
	r.pos++
	return r.b[r.pos-1], nil
}

func (r *treader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		return 0, errThrift
	}
	r.pos += n
	return v, nil
}

func (r *treader) skip(n uint64) error {
	if n > uint64(len(r.b)-r.pos) {
		return errThrift
	}
	r.pos += int(n)
	return nil
}

// value reads one value of type typ.
func (r *treader) value(typ byte, depth int) (tvalue, error) {
	if depth > thriftDepth {
		return tvalue{}, errThrift
	}
	start := r.pos
	var err error
	switch typ {
	case tTrue, tFalse, tByte: // a bool in a list is a byte
		err = r.skip(1)
	case tI16, tI32, tI64:
		_, err = r.uvarint()
	case tDouble:
		err = r.skip(8)
	case tBinary:
		var n uint64
		if n, err = r.uvarint(); err == nil {
			err = r.skip(n)
		}
	case tList, tSet:
		return r.list(depth)
	case tMap:
		err = r.skipMap(depth)
	case tStruct:
		return r.structure(depth)
	default:
		err = errThrift
	}
	return tvalue{raw: r.b[start:r.pos]}, err
}

func (r *treader) list(depth int) (tvalue, error) {
	h, err := r.byte()
	if err != nil {
		return tvalue{}, err
	}
	n, elem := uint64(h>>4), h&0x0f
	if n == 15 {
		if n, err = r.uvarint(); err != nil {
			return tvalue{}, err
		}
	}
	if n > uint64(len(r.b)-r.pos) { // every item takes a byte at least
		return tvalue{}, errThrift
	}
	v := tvalue{elem: elem, items: make([]tvalue, 0, n)}
	for range n {
		it, err := r.value(elem, depth+1)
		if err != nil {
			return tvalue{}, err
		}
		v.items = append(v.items, it)
	}
	return v, nil
}

func (r *treader) skipMap(depth int) error {
	n, err := r.uvarint()
	if err != nil || n == 0 {
		return err
	}
	kv, err := r.byte()
	if err != nil || n > uint64(len(r.b)-r.pos) {
		return errThrift
	}
	for range n {
		if _, err := r.value(kv>>4, depth+1); err != nil {
			return err
		}
		if _, err := r.value(kv&0x0f, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (r *treader) structure(depth int) (tvalue, error) {
	var v tvalue
	last := int16(0)
	for {
		h, err := r.byte()
		if err != nil {
			return tvalue{}, err
		}
		if h == tStop {
			return v, nil
		}
		typ, id := h&0x0f, last+int16(h>>4)
		if h>>4 == 0 {
			u, err := r.uvarint()
			if err != nil || u > 0xffff {
				return tvalue{}, errThrift
			}
			id = int16(uint16(u>>1)) ^ -int16(u&1)
		}
		f := tfield{id: id, typ: typ}
		if typ != tTrue && typ != tFalse {
			if f.v, err = r.value(typ, depth+1); err != nil {
				return tvalue{}, err
			}
		}
		v.fields = append(v.fields, f)
		last = id
	}
}

// appendValue writes v, of type typ, after b.
func appendValue(b []byte, typ byte, v tvalue) []byte {
	switch typ {
	case tStruct:
		last := int16(0)
		for _, f := range v.fields {
			if d := f.id - last; d > 0 && d <= 15 {
				b = append(b, byte(d)<<4|f.typ)
			} else {
				b = append(b, f.typ)
				b = binary.AppendUvarint(b, uint64(uint16(f.id<<1^f.id>>15)))
			}
			if f.typ != tTrue && f.typ != tFalse {
				b = appendValue(b, f.typ, f.v)
			}
			last = f.id
		}
		return append(b, tStop)
	case tList, tSet:
		if n := len(v.items); n < 15 {
			b = append(b, byte(n)<<4|v.elem)
		} else {
			b = append(b, 0xf0|v.elem)
			b = binary.AppendUvarint(b, uint64(n))
		}
		for _, it := range v.items {
			b = appendValue(b, v.elem, it)
		}
		return b
	}
	return append(b, v.raw...)
}

// field returns the field id of struct v, nil if absent.
func (v *tvalue) field(id int16) *tfield {
	for i := range v.fields {
		if v.fields[i].id == id {
			return &v.fields[i]
		}
	}
	return nil
}

// drop removes the fields ids of struct v, and says whether any was there.
func (v *tvalue) drop(ids ...int16) bool {
	out := v.fields[:0]
	for _, f := range v.fields {
		keep := true
		for _, id := range ids {
			keep = keep && f.id != id
		}
		if keep {
			out = append(out, f)
		}
	}
	dropped := len(out) != len(v.fields)
	v.fields = out
	return dropped
}

// i32 is the value of an i32 field.
func (f *tfield) i32() (int32, bool) {
	if f.typ != tI32 {
		return 0, false
	}
	u, n := binary.Uvarint(f.v.raw)
	if n <= 0 || u > 0xffffffff {
		return 0, false
	}
	return int32(uint32(u>>1)) ^ -int32(u&1), true
}

// Thrift field ids of the footer structs that sanitizeFooter reads.
const (
	fmdSchema       = 2  // FileMetaData.schema: list<SchemaElement>
	seName          = 4  // SchemaElement.name
	seConvertedType = 6  // SchemaElement.converted_type
	seLogicalType   = 10 // SchemaElement.logicalType: union LogicalType
	maxConverted    = 21 // INTERVAL, the last ConvertedType
)

// knownLogical are the LogicalType union members arrow-go reads (9 is unused).
func knownLogical(id int16) bool { return id >= 1 && id <= 18 && id != 9 }

// sanitizeFooter drops, from the schema of a raw footer, the logical types that
// arrow-go does not know (a newer writer's: arrow-go panics on them) together with the
// element's converted type, and converted types past the known ones. Such columns are
// then read by their physical type, as pyarrow reads them. It returns the new footer
// and a note per column changed; no notes when nothing was.
func sanitizeFooter(raw []byte) ([]byte, []string, error) {
	r := &treader{b: raw}
	root, err := r.structure(0)
	if err != nil {
		return nil, nil, err
	}
	schema := root.field(fmdSchema)
	if schema == nil || schema.typ != tList {
		return nil, nil, errThrift
	}
	var notes []string
	for i := range schema.v.items {
		el := &schema.v.items[i]
		name := "?"
		if n := el.field(seName); n != nil && n.typ == tBinary {
			nr := &treader{b: n.v.raw}
			if l, err := nr.uvarint(); err == nil && l <= uint64(len(nr.b)-nr.pos) {
				name = string(nr.b[nr.pos : nr.pos+int(l)])
			}
		}
		if lt := el.field(seLogicalType); lt != nil {
			id := int16(-1)
			if lt.typ == tStruct && len(lt.v.fields) == 1 {
				id = lt.v.fields[0].id
			}
			if lt.typ != tStruct || !knownLogical(id) {
				el.drop(seLogicalType, seConvertedType)
				notes = append(notes, noteUnknown(name, "logical type", int(id)))
				continue
			}
		}
		if ct := el.field(seConvertedType); ct != nil {
			if v, ok := ct.i32(); !ok || v < 0 || v > maxConverted {
				el.drop(seConvertedType)
				notes = append(notes, noteUnknown(name, "converted type", int(v)))
			}
		}
	}
	if len(notes) == 0 {
		return raw, nil, nil
	}
	return appendValue(nil, tStruct, root), notes, nil
}

func noteUnknown(col, what string, id int) string {
	return fmt.Sprintf("column %q: %s %d is unknown to this reader; read as its physical type", col, what, id)
}
