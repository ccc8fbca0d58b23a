package transform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// kind is how a column's values flow between transforms.
type kind uint8

const (
	kFloat  kind = iota // float64
	kInt                // int64
	kUint               // uint64, held as its bits in an int64
	kString             // until hash_bucket: never materialised, hashed while read
)

func (k kind) String() string {
	return [...]string{"float", "int", "uint64", "string"}[k]
}

// source is one input column as Compile found it.
type source struct {
	name  string
	typ   arrow.DataType
	list  bool // list, large_list or fixed_size_list of elem
	fixed int  // fixed_size_list's length; 0 for the others
	elem  arrow.Type
	kind  kind // of the values (of the elements, for a list)
}

// scalarKind classifies a non-list Arrow type; ok is false for anything unsupported.
func scalarKind(t arrow.Type) (k kind, ok bool) {
	switch t {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.BOOL:
		return kInt, true
	case arrow.UINT64:
		return kUint, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return kFloat, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return kString, true
	}
	return 0, false
}

func classify(f arrow.Field) (source, error) {
	s := source{name: f.Name, typ: f.Type}
	if f.Type == nil {
		return s, fmt.Errorf("column %q has no type", f.Name)
	}
	var ok bool
	switch t := f.Type.(type) {
	case *arrow.ListType:
		s.list, s.elem = true, t.Elem().ID()
	case *arrow.LargeListType:
		s.list, s.elem = true, t.Elem().ID()
	case *arrow.FixedSizeListType:
		s.list, s.elem, s.fixed = true, t.Elem().ID(), int(t.Len())
		if s.fixed < 1 || s.fixed > maxPad {
			return s, fmt.Errorf("column %q: fixed_size_list of length %d (want 1..%d)", f.Name, s.fixed, maxPad)
		}
	default:
		s.elem = t.ID()
	}
	s.kind, ok = scalarKind(s.elem)
	if s.list && s.elem == arrow.BOOL {
		ok = false
	}
	if !ok {
		return s, fmt.Errorf("column %q: type %s is not supported (want ints, floats, bool, strings, or a list of ints, floats or strings)", f.Name, f.Type)
	}
	return s, nil
}

// sameType says whether an array of type t can be read as s: the same type ids, down
// to a list's elements (field names and nullability may differ).
func (s *source) sameType(t arrow.DataType) bool {
	if t.ID() != s.typ.ID() {
		return false
	}
	switch t := t.(type) {
	case *arrow.ListType:
		return t.Elem().ID() == s.elem
	case *arrow.LargeListType:
		return t.Elem().ID() == s.elem
	case *arrow.FixedSizeListType:
		return t.Elem().ID() == s.elem && int(t.Len()) == s.fixed
	}
	return true
}
