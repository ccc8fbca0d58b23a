package dataset

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// mergeSchema checks that the schema of file path has the same top-level columns, by name
// and Arrow type, as the first file's (column order may differ; readers map names). A
// column that is nullable in any file is nullable in the result, so that consumers never
// assume "no nulls" from a first file that happened to declare its columns required.
func mergeSchema(first *arrow.Schema, firstPath string, sc *arrow.Schema, path string) (*arrow.Schema, error) {
	mismatch := func(col, format string, args ...any) error {
		return &Error{Op: "open", Path: path, RowGroup: -1, Column: col, Err: kindf(ErrSchema, format, args...)}
	}
	fields := first.Fields()
	changed := false
	for i, want := range fields {
		got, ok := sc.FieldsByName(want.Name)
		if !ok || len(got) == 0 {
			return nil, mismatch(want.Name, "missing, but %s has it (%s)", firstPath, want.Type)
		}
		if !arrow.TypeEqual(got[0].Type, want.Type) {
			return nil, mismatch(want.Name, "is %s, but %s has %s", got[0].Type, firstPath, want.Type)
		}
		if got[0].Nullable && !want.Nullable {
			fields[i].Nullable, changed = true, true
		}
	}
	for _, f := range sc.Fields() {
		if !first.HasField(f.Name) {
			return nil, mismatch(f.Name, "is %s, but %s has no such column", f.Type, firstPath)
		}
	}
	if !changed {
		return first, nil
	}
	md := first.Metadata()
	return arrow.NewSchema(fields, &md), nil
}
