package dataset

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Files of one dataset often write a column in different Arrow layouts of the same
// values: pyarrow writes pandas categoricals as dictionary<int32, string>, polars writes
// large_string and large_list, and older writers name a list's element "item" where
// newer ones say "element". The dataset's schema has one canonical type per column
// (canonical, then unify), and Reader converts each file's arrays to it (conform), so
// that the transforms and the filter see one type per column whatever file a row
// group comes from:
//   - dictionary<any index, string> is string (binary likewise): the dictionary decoded;
//   - string and large_string are large_string (binary and large_binary likewise), so
//     that no row group can overflow 32-bit offsets;
//   - list and large_list of the same elements are large_list;
//   - structs with the same fields, and lists, unify field by field; nullable wins.
// Any other difference is a schema mismatch that names both files.

// canonical is t with every dictionary of strings or binaries replaced by its values.
func canonical(t arrow.DataType) arrow.DataType {
	switch t := t.(type) {
	case *arrow.DictionaryType:
		if arrow.IsBinaryLike(t.ValueType.ID()) || arrow.IsLargeBinaryLike(t.ValueType.ID()) {
			return canonical(t.ValueType)
		}
	case *arrow.ListType:
		e := t.ElemField()
		e.Type = canonical(e.Type)
		return arrow.ListOfField(e)
	case *arrow.LargeListType:
		e := t.ElemField()
		e.Type = canonical(e.Type)
		return arrow.LargeListOfField(e)
	case *arrow.FixedSizeListType:
		e := t.ElemField()
		e.Type = canonical(e.Type)
		return arrow.FixedSizeListOfField(t.Len(), e)
	case *arrow.StructType:
		fs := t.Fields()
		for i := range fs {
			fs[i].Type = canonical(fs[i].Type)
		}
		return arrow.StructOf(fs...)
	}
	return t
}

// unify is the type that columns of canonical types a and b are both read as; ok is
// false when no such type exists.
func unify(a, b arrow.DataType) (arrow.DataType, bool) {
	if typeEqual(a, b) {
		return a, true
	}
	switch {
	case isString(a) && isString(b):
		return arrow.BinaryTypes.LargeString, true
	case isBinary(a) && isBinary(b):
		return arrow.BinaryTypes.LargeBinary, true
	}
	switch a := a.(type) {
	case *arrow.ListType, *arrow.LargeListType:
		if b.ID() != arrow.LIST && b.ID() != arrow.LARGE_LIST {
			return nil, false
		}
		e, ok := unifyField(a.(arrow.ListLikeType).ElemField(), b.(arrow.ListLikeType).ElemField())
		if !ok {
			return nil, false
		}
		if a.ID() == arrow.LIST && b.ID() == arrow.LIST {
			return arrow.ListOfField(e), true
		}
		return arrow.LargeListOfField(e), true
	case *arrow.FixedSizeListType:
		bt, ok := b.(*arrow.FixedSizeListType)
		if !ok || bt.Len() != a.Len() {
			return nil, false
		}
		e, ok := unifyField(a.ElemField(), bt.ElemField())
		if !ok {
			return nil, false
		}
		return arrow.FixedSizeListOfField(a.Len(), e), true
	case *arrow.StructType:
		bt, ok := b.(*arrow.StructType)
		if !ok || bt.NumFields() != a.NumFields() {
			return nil, false
		}
		fs := a.Fields()
		for i := range fs {
			j, ok := bt.FieldIdx(fs[i].Name)
			if !ok {
				return nil, false
			}
			if fs[i], ok = unifyField(fs[i], bt.Field(j)); !ok {
				return nil, false
			}
		}
		return arrow.StructOf(fs...), true
	}
	return nil, false
}

// unifyField unifies two fields' types, keeping a's name and metadata; the result is
// nullable when either is.
func unifyField(a, b arrow.Field) (arrow.Field, bool) {
	t, ok := unify(a.Type, b.Type)
	if !ok {
		return a, false
	}
	a.Type, a.Nullable = t, a.Nullable || b.Nullable
	return a, true
}

// typeEqual is arrow.TypeEqual, but compares large lists as it does lists (by their
// elements' types and nullability, not their fields' names and metadata), also inside
// lists and structs.
func typeEqual(a, b arrow.DataType) bool {
	switch at := a.(type) {
	case *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType:
		if a.ID() != b.ID() {
			return false
		}
		if fa, ok := a.(*arrow.FixedSizeListType); ok && fa.Len() != b.(*arrow.FixedSizeListType).Len() {
			return false
		}
		ea, eb := at.(arrow.ListLikeType).ElemField(), b.(arrow.ListLikeType).ElemField()
		return ea.Nullable == eb.Nullable && typeEqual(ea.Type, eb.Type)
	case *arrow.StructType:
		bt, ok := b.(*arrow.StructType)
		if !ok || bt.NumFields() != at.NumFields() {
			return false
		}
		for i, f := range at.Fields() {
			g := bt.Field(i)
			if f.Name != g.Name || f.Nullable != g.Nullable || !typeEqual(f.Type, g.Type) {
				return false
			}
		}
		return true
	}
	return arrow.TypeEqual(a, b)
}

func isString(t arrow.DataType) bool {
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

func isBinary(t arrow.DataType) bool {
	return t.ID() == arrow.BINARY || t.ID() == arrow.LARGE_BINARY
}

// canonicalSchema is sc with canonical types.
func canonicalSchema(sc *arrow.Schema) *arrow.Schema {
	fs := sc.Fields()
	for i := range fs {
		fs[i].Type = canonical(fs[i].Type)
	}
	md := sc.Metadata()
	return arrow.NewSchema(fs, &md)
}

// mergeSchema checks that the schema of file path (canonical types) has the same
// top-level columns as the merged schema of the files before it, whose first is
// firstPath, and returns the schema of them all: each column's types unified (column
// order may differ; readers map names). A column that is nullable in any file is
// nullable in the result, so that consumers never assume "no nulls" from a first file
// that happened to declare its columns required.
func mergeSchema(merged *arrow.Schema, firstPath string, sc *arrow.Schema, path string) (*arrow.Schema, error) {
	mismatch := func(col, format string, args ...any) error {
		return &Error{Op: "open", Path: path, RowGroup: -1, Column: col, Err: kindf(ErrSchema, format, args...)}
	}
	fields := merged.Fields()
	changed := false
	for i, want := range fields {
		got, ok := sc.FieldsByName(want.Name)
		if !ok || len(got) == 0 {
			return nil, mismatch(want.Name, "missing, but %s has it (%s)", firstPath, want.Type)
		}
		f, ok := unifyField(want, got[0])
		if !ok {
			return nil, mismatch(want.Name, "is %s, but %s has %s", got[0].Type, firstPath, want.Type)
		}
		if f.Nullable != want.Nullable || !typeEqual(f.Type, want.Type) {
			fields[i], changed = f, true
		}
	}
	for _, f := range sc.Fields() {
		if !merged.HasField(f.Name) {
			return nil, mismatch(f.Name, "is %s, but %s has no such column", f.Type, firstPath)
		}
	}
	if !changed {
		return merged, nil
	}
	md := merged.Metadata()
	return arrow.NewSchema(fields, &md), nil
}
