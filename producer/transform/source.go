package transform

import (
	"fmt"
	"strings"

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
	tm    timeInfo
	dec   decInfo
	dict  bool // a dictionary of strings: read as its values
}

// readKind is the kind of s's values as read, before any op: an int for a decimal read
// by the decimal step (decInfo.asInt), s.kind otherwise.
func (s *source) readKind() kind {
	if s.dec.asInt {
		return kInt
	}
	return s.kind
}

// timeClass tells the columns datetime reads apart.
type timeClass uint8

const (
	tcNone      timeClass = iota
	tcTimestamp           // since 1970-01-01 00:00 UTC (or wall clock, without a zone)
	tcDate                // days (date32) or ms (date64) since 1970-01-01
	tcTimeOfDay           // since midnight
)

func (c timeClass) String() string {
	return [...]string{"", "timestamp", "date", "time of day"}[c]
}

// timeInfo is a time column's unit and zone; its values flow as int64 counts of unit.
type timeInfo struct {
	class timeClass
	unit  int64  // nanoseconds per unit: 1, 1e3, 1e6, 1e9, or a day's
	zone  string // a timestamp's time zone as the schema names it; "" for none
}

// decInfo is a decimal column's scale and how it is read: by default as the float64
// nearest to unscaled × 10^-scale; asInt (the decimal step) as unscaled × 10^shift.
type decInfo struct {
	ok    bool
	scale int32
	asInt bool
	shift int32
}

const (
	nsPerSec = int64(1e9)
	nsPerDay = 86400 * nsPerSec
)

// unitName names a time unit in messages.
func unitName(ns int64) string {
	switch ns {
	case 1:
		return "nanoseconds"
	case 1e3:
		return "microseconds"
	case 1e6:
		return "milliseconds"
	case 1e9:
		return "seconds"
	}
	return "days"
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
	if classifyTyped(&s) {
		return s, nil
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
		return s, fmt.Errorf("column %q: type %s is not supported (want ints, floats, bool, strings, timestamps, dates, times, decimals, or a list of ints, floats or strings)%s",
			f.Name, f.Type, structHint(f))
	}
	return s, nil
}

// structHint names a struct's fields by the dotted paths a config reads them by.
func structHint(f arrow.Field) string {
	st, ok := f.Type.(*arrow.StructType)
	if !ok {
		return ""
	}
	var paths []string
	var walk func(prefix string, t *arrow.StructType)
	walk = func(prefix string, t *arrow.StructType) {
		for _, c := range t.Fields() {
			if sub, ok := c.Type.(*arrow.StructType); ok {
				walk(prefix+c.Name+".", sub)
			} else {
				paths = append(paths, fmt.Sprintf("%q", prefix+c.Name))
			}
		}
	}
	walk(f.Name+".", st)
	if len(paths) > 8 {
		paths = append(paths[:8], "...")
	}
	return "; read a struct's fields by their dotted paths: " + strings.Join(paths, ", ")
}

// classifyTyped classifies the non-list types whose values need their type to read:
// times (int64 counts of their unit), decimals (floats) and dictionaries of strings.
func classifyTyped(s *source) bool {
	s.elem = s.typ.ID()
	switch t := s.typ.(type) {
	case *arrow.TimestampType:
		s.tm = timeInfo{tcTimestamp, int64(t.Unit.Multiplier()), t.TimeZone}
	case *arrow.Date32Type:
		s.tm = timeInfo{tcDate, nsPerDay, ""}
	case *arrow.Date64Type:
		s.tm = timeInfo{tcDate, 1e6, ""}
	case *arrow.Time32Type:
		s.tm = timeInfo{tcTimeOfDay, int64(t.Unit.Multiplier()), ""}
	case *arrow.Time64Type:
		s.tm = timeInfo{tcTimeOfDay, int64(t.Unit.Multiplier()), ""}
	case arrow.DecimalType:
		s.kind, s.dec = kFloat, decInfo{ok: true, scale: t.GetScale()}
		return true
	case *arrow.DictionaryType:
		if v := t.ValueType.ID(); !arrow.IsBinaryLike(v) && !arrow.IsLargeBinaryLike(v) {
			return false
		}
		s.kind, s.dict = kString, true
		return true
	default:
		return false
	}
	s.kind = kInt
	return true
}

// sameType says whether an array of type t can be read as s: the same type ids, down
// to a list's elements (field names and nullability may differ), the same unit of a
// time and scale of a decimal, the same values of a dictionary.
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
	case arrow.TemporalWithUnit:
		return int64(t.TimeUnit().Multiplier()) == s.tm.unit
	case arrow.DecimalType:
		return t.GetScale() == s.dec.scale
	case *arrow.DictionaryType:
		return t.ValueType.ID() == s.typ.(*arrow.DictionaryType).ValueType.ID()
	}
	return true
}
