package thrift

import "encoding/binary"

// Value is a value read as a tree, so that it can be changed field by field and written
// back (Append): a struct keeps its Fields, a list or set its element type and Items,
// and every other value (a map included) its bytes as stored, in Raw.
type Value struct {
	Fields []Field
	Elem   Type
	Items  []Value
	Raw    []byte
}

// Field is one field of a struct; a boolean's value is its Type (True, False).
type Field struct {
	ID    int16
	Type  Type
	Value Value
}

// Struct reads a struct as a tree.
func (r *Reader) Struct() (Value, error) { return r.structure(0) }

func (r *Reader) value(typ Type, depth int) (Value, error) {
	if depth > MaxDepth && typ >= List {
		return Value{}, ErrMalformed
	}
	switch typ {
	case List, Set:
		return r.list(depth)
	case Struct:
		return r.structure(depth)
	}
	start := r.pos
	err := r.skip(typ, depth)
	return Value{Raw: r.b[start:r.pos:r.pos]}, err
}

func (r *Reader) list(depth int) (Value, error) {
	n, elem, err := r.ListHeader()
	if err != nil {
		return Value{}, err
	}
	v := Value{Elem: elem, Items: make([]Value, 0, n)}
	for range n {
		it, err := r.value(inContainer(elem), depth+1)
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, it)
	}
	return v, nil
}

func (r *Reader) structure(depth int) (Value, error) {
	var v Value
	for last := int16(0); ; {
		id, typ, err := r.FieldHeader(last)
		if err != nil {
			return Value{}, err
		}
		if typ == Stop {
			return v, nil
		}
		f := Field{ID: id, Type: typ}
		if typ != True && typ != False {
			if f.Value, err = r.value(typ, depth+1); err != nil {
				return Value{}, err
			}
		}
		v.Fields = append(v.Fields, f)
		last = id
	}
}

// Append writes v, a value of type typ, after b, with the short field headers writers
// use: a footer read and written back unchanged is the same bytes.
func Append(b []byte, typ Type, v Value) []byte {
	switch typ {
	case Struct:
		last := int16(0)
		for _, f := range v.Fields {
			if d := f.ID - last; d > 0 && d <= 15 {
				b = append(b, byte(d)<<4|byte(f.Type))
			} else {
				b = append(b, byte(f.Type))
				b = binary.AppendUvarint(b, uint64(uint16(f.ID<<1^f.ID>>15)))
			}
			if f.Type != True && f.Type != False {
				b = Append(b, f.Type, f.Value)
			}
			last = f.ID
		}
		return append(b, byte(Stop))
	case List, Set:
		if n := len(v.Items); n < 15 {
			b = append(b, byte(n)<<4|byte(v.Elem))
		} else {
			b = append(b, 0xf0|byte(v.Elem))
			b = binary.AppendUvarint(b, uint64(n))
		}
		for _, it := range v.Items {
			b = Append(b, inContainer(v.Elem), it)
		}
		return b
	}
	return append(b, v.Raw...)
}

// Field returns field id of struct v, nil if absent.
func (v *Value) Field(id int16) *Field {
	for i := range v.Fields {
		if v.Fields[i].ID == id {
			return &v.Fields[i]
		}
	}
	return nil
}

// Drop removes fields ids from struct v and says whether any was there.
func (v *Value) Drop(ids ...int16) bool {
	out := v.Fields[:0]
	for _, f := range v.Fields {
		keep := true
		for _, id := range ids {
			keep = keep && f.ID != id
		}
		if keep {
			out = append(out, f)
		}
	}
	dropped := len(out) != len(v.Fields)
	v.Fields = out
	return dropped
}

// I32 is the value of an i32 field (ok false for no field, nil, or one of another type).
func (f *Field) I32() (int32, bool) {
	if f == nil || f.Type != I32 {
		return 0, false
	}
	u, n := binary.Uvarint(f.Value.Raw)
	if n <= 0 || u > 0xffffffff {
		return 0, false
	}
	return Unzigzag32(u), true
}

// Text is the value of a binary field, as a string.
func (f *Field) Text() (string, bool) {
	if f == nil || f.Type != Binary {
		return "", false
	}
	b, err := NewReader(f.Value.Raw).Binary()
	return string(b), err == nil
}
