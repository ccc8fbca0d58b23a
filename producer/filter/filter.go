package filter

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
)

// Filter is a compiled row filter: immutable, safe to share between goroutines. A nil
// *Filter keeps every row, like an empty one.
type Filter struct {
	preds []pred
	cols  []string
}

// Compile checks preds against the dataset fields (by name) and compiles them. No
// predicates give a Filter that keeps everything (Empty is true).
func Compile(preds []config.Predicate, fields map[string]arrow.Field) (*Filter, error) {
	f := &Filter{}
	for _, p := range preds {
		fld, ok := fields[p.Column]
		if !ok {
			return nil, errAt(p, nil, "column %q is not in the dataset", p.Column)
		}
		q, err := compile(p, fld)
		if err != nil {
			return nil, err
		}
		f.preds = append(f.preds, q)
		if !slices.Contains(f.cols, p.Column) {
			f.cols = append(f.cols, p.Column)
		}
	}
	slices.Sort(f.cols)
	for i := range f.preds {
		f.preds[i].idx = slices.Index(f.cols, f.preds[i].col)
	}
	return f, nil
}

func compile(p config.Predicate, fld arrow.Field) (pred, error) {
	q := pred{col: p.Column, op: p.Op, code: opCodes[p.Op], class: classOf(fld.Type), typ: fld.Type}
	var vals []config.Scalar
	switch p.Op {
	case config.PredNull, config.PredNotNull:
		return q, nil
	case config.PredEq, config.PredNe, config.PredLt, config.PredLe, config.PredGt, config.PredGe:
		vals = []config.Scalar{p.Value}
	case config.PredIn, config.PredNotIn:
		vals = p.Values
		q.negate = p.Op == config.PredNotIn
	default:
		return q, errAt(p, &fld, "unknown operator %q", p.Op)
	}
	if q.class == cOther {
		return q, errAt(p, &fld, "%s values cannot be compared; only is_null and not_null apply", fld.Type)
	}
	for _, v := range vals {
		switch {
		case v.IsStr && q.class != cString:
			return q, errAt(p, &fld, "%q is a string but the column is numeric", v.Str)
		case !v.IsStr && q.class == cString:
			return q, errAt(p, &fld, "%g is a number but the column holds strings", v.Num)
		}
	}
	switch {
	case q.class == cString && q.setOp():
		for _, v := range vals {
			q.strs = append(q.strs, v.Str)
		}
		slices.Sort(q.strs)
	case q.class == cString:
		q.s = p.Value.Str
	case q.class == cFloat && q.setOp():
		for _, v := range vals {
			if v.Num == v.Num {
				q.floats = append(q.floats, v.Num)
			}
		}
		slices.Sort(q.floats)
	case q.class == cFloat:
		q.c = p.Value.Num
	case q.setOp():
		q.keys = intKeys(vals, q.class)
	case p.Value.IsInt || p.Value.IsUint:
		q.lo, q.hi, q.negate = intRangeExact(p.Op, p.Value, q.class)
	default:
		q.lo, q.hi, q.negate = intRange(p.Op, p.Value.Num, q.class)
	}
	return q, nil
}

// errAt formats a Compile error: "line L: filter on column "c" (type): ...".
func errAt(p config.Predicate, fld *arrow.Field, format string, args ...any) error {
	where := "filter"
	if p.Line > 0 {
		where = fmt.Sprintf("line %d: filter", p.Line)
	}
	if fld != nil {
		where += fmt.Sprintf(" on column %q (%s)", p.Column, fld.Type)
	}
	return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
}

// Columns are the columns the filter reads, sorted, each once.
func (f *Filter) Columns() []string {
	if f == nil {
		return nil
	}
	return slices.Clone(f.cols)
}

// Empty reports whether the filter keeps every row.
func (f *Filter) Empty() bool { return f == nil || len(f.preds) == 0 }
