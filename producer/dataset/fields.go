package dataset

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Columns are named by their top-level name, or, for a field of a struct, by the path
// of names from the top-level column down, joined by dots: "user.age", "a.b.c". A
// top-level name is looked up first, so a column whose own name holds a dot wins over
// a struct path that spells the same. A field of a struct is null wherever a struct
// above it is.

// Field returns the column of that name: a top-level column (a partition column
// included), or a field of a struct by its dotted path, named by that path and nullable
// when it or any struct above it is.
func (d *Dataset) Field(name string) (arrow.Field, bool) {
	path, ok := lookupPath(d.Schema.Fields(), name)
	if !ok {
		return arrow.Field{}, false
	}
	f := d.Schema.Field(path[0])
	nullable := f.Nullable
	for _, i := range path[1:] {
		f = f.Type.(*arrow.StructType).Field(i)
		nullable = nullable || f.Nullable
	}
	f.Name, f.Nullable = name, nullable
	return f, true
}

// ColumnNames returns every column's name in schema order: each top-level column, and
// after a struct the dotted paths of its fields, depth first ("s", "s.a", "s.b", "s.b.c"),
// so that ranges and globs in the config reach fields of structs too. Partition
// columns come last.
func (d *Dataset) ColumnNames() []string {
	var names []string
	top := map[string]bool{}
	for _, f := range d.Schema.Fields() {
		top[f.Name] = true
	}
	var walk func(prefix string, fs []arrow.Field)
	walk = func(prefix string, fs []arrow.Field) {
		for _, f := range fs {
			name := f.Name
			if prefix != "" {
				name = prefix + "." + f.Name
				if top[name] {
					continue // a top-level column of that name hides the path
				}
			}
			names = append(names, name)
			if st, ok := f.Type.(*arrow.StructType); ok {
				walk(name, st.Fields())
			}
		}
	}
	walk("", d.Schema.Fields())
	return names
}

// lookupPath finds name among fields, or as a dotted path into their structs, and
// returns the index of each field on the way down.
func lookupPath(fields []arrow.Field, name string) ([]int, bool) {
	for i, f := range fields {
		if f.Name == name {
			return []int{i}, true
		}
	}
	for k := 0; k < len(name); k++ {
		if name[k] != '.' {
			continue
		}
		head, rest := name[:k], name[k+1:]
		for i, f := range fields {
			if st, ok := f.Type.(*arrow.StructType); ok && f.Name == head {
				if sub, ok := lookupPath(st.Fields(), rest); ok {
					return append([]int{i}, sub...), true
				}
			}
		}
	}
	return nil, false
}

// pathNames is the field names of path (from lookupPath) under fields.
func pathNames(fields []arrow.Field, path []int) []string {
	names := make([]string, len(path))
	for k, i := range path {
		names[k] = fields[i].Name
		if st, ok := fields[i].Type.(*arrow.StructType); ok {
			fields = st.Fields()
		}
	}
	return names
}

// structChild returns field name of every chunk of struct column c, null where the
// struct is (Arrow leaves a child's values under a null parent unspecified). The chunks'
// own types count: arrow-go gives a struct of the fields read only, whatever c says.
func structChild(c *arrow.Chunked, name string) (*arrow.Chunked, error) {
	arrs := make([]arrow.Array, 0, len(c.Chunks()))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	var typ arrow.DataType
	for _, ch := range c.Chunks() {
		s, ok := ch.(*array.Struct)
		if !ok {
			return nil, fmt.Errorf("%s is not a struct", ch.DataType())
		}
		st := s.DataType().(*arrow.StructType)
		i, ok := st.FieldIdx(name)
		if !ok {
			return nil, fmt.Errorf("struct has no field %q", name)
		}
		child := childOf(s, i)
		arrs = append(arrs, child)
		if typ == nil {
			typ = child.DataType()
		} else if !typeEqual(typ, child.DataType()) {
			return nil, fmt.Errorf("field %q is %s in one chunk, %s in another", name, typ, child.DataType())
		}
	}
	if typ == nil {
		st, ok := c.DataType().(*arrow.StructType)
		i, found := 0, false
		if ok {
			i, found = st.FieldIdx(name)
		}
		if !found {
			return nil, fmt.Errorf("struct has no field %q", name)
		}
		typ = st.Field(i).Type
	}
	return arrow.NewChunked(typ, arrs), nil
}

// childOf is field i of s with s's nulls added to its own.
func childOf(s *array.Struct, i int) arrow.Array {
	child := s.Field(i)
	cd := child.Data().(*array.Data)
	if s.NullN() == 0 || len(cd.Buffers()) == 0 || cd.DataType().ID() == arrow.NULL ||
		cd.DataType().ID() == arrow.SPARSE_UNION || cd.DataType().ID() == arrow.DENSE_UNION {
		child.Retain()
		return child
	}
	n, off := child.Len(), cd.Offset()
	bm := make([]byte, bitutil.BytesForBits(int64(off+n)))
	nulls := 0
	for k := range n {
		if s.IsValid(k) && child.IsValid(k) {
			bitutil.SetBit(bm, off+k)
		} else {
			nulls++
		}
	}
	bufs := append([]*memory.Buffer{memory.NewBufferBytes(bm)}, cd.Buffers()[1:]...)
	var nd *array.Data
	if dict, ok := cd.Dictionary().(*array.Data); ok && dict != nil {
		nd = array.NewDataWithDictionary(cd.DataType(), n, bufs, nulls, off, dict)
	} else {
		nd = array.NewData(cd.DataType(), n, bufs, cd.Children(), nulls, off)
	}
	defer nd.Release()
	return array.MakeFromData(nd)
}
