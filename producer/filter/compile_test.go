package filter

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
)

var schema = map[string]arrow.Field{
	"i": {Name: "i", Type: arrow.PrimitiveTypes.Int64},
	"u": {Name: "u", Type: arrow.PrimitiveTypes.Uint64},
	"f": {Name: "f", Type: arrow.PrimitiveTypes.Float32},
	"s": {Name: "s", Type: arrow.BinaryTypes.String},
	"d": {Name: "d", Type: arrow.FixedWidthTypes.Date32},
	"l": {Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		p    config.Predicate
		want string
	}{
		{config.Predicate{Column: "nope", Op: "==", Line: 4}, `line 4: filter: column "nope" is not in the dataset`},
		{config.Predicate{Column: "i", Op: "~", Line: 5}, `line 5: filter on column "i" (int64): unknown operator "~"`},
		{config.Predicate{Column: "i", Op: "==", Value: str("3"), Line: 6}, `line 6: filter on column "i" (int64): "3" is a string but the column is numeric`},
		{config.Predicate{Column: "s", Op: "in", Values: []config.Scalar{str("a"), num(1)}}, `filter on column "s" (utf8): 1 is a number but the column holds strings`},
		{config.Predicate{Column: "d", Op: "<", Value: num(1)}, `column "d" (date32): date32 values cannot be compared; only is_null and not_null apply`},
		{config.Predicate{Column: "l", Op: "==", Value: num(1)}, "only is_null and not_null apply"},
	}
	for _, c := range cases {
		_, err := Compile([]config.Predicate{c.p}, schema)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.p, err, c.want)
		}
	}
	if _, err := Compile([]config.Predicate{{Column: "l", Op: "is_null"}, {Column: "d", Op: "not_null"}}, schema); err != nil {
		t.Errorf("null tests on any type: %v", err)
	}
}

func TestColumnsAndEmpty(t *testing.T) {
	f, err := Compile([]config.Predicate{{Column: "s", Op: "is_null"}, {Column: "i", Op: ">", Value: num(1)}, {Column: "s", Op: "!=", Value: str("")}}, schema)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.Columns()); got != "[i s]" || f.Empty() {
		t.Errorf("columns %s, empty %v", got, f.Empty())
	}
	for _, e := range []*Filter{nil, mustCompile(t, nil)} {
		if !e.Empty() || len(e.Columns()) != 0 || !e.MayMatch(nil) {
			t.Errorf("empty filter: %v %v", e.Empty(), e.Columns())
		}
		sel, err := e.Select(nil, 3)
		if err != nil || fmt.Sprint(sel) != "[0 1 2]" {
			t.Errorf("empty filter selects %v, %v", sel, err)
		}
	}
	// No passing row is an empty slice, not nil ("all rows" to the transforms).
	none := mustCompile(t, []config.Predicate{{Column: "i", Op: "==", Value: num(99)}})
	sel, err := none.Select([]*arrow.Chunked{build(arrow.PrimitiveTypes.Int64, []value{{i: 1}})}, 1)
	if err != nil || sel == nil || len(sel) != 0 {
		t.Errorf("no rows: %#v, %v", sel, err)
	}
}

func mustCompile(t *testing.T, p []config.Predicate) *Filter {
	t.Helper()
	f, err := Compile(p, schema)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSelectErrors(t *testing.T) {
	f := mustCompile(t, []config.Predicate{{Column: "i", Op: ">", Value: num(0)}})
	i64 := build(arrow.PrimitiveTypes.Int64, []value{{i: 1}, {i: 2}})
	f32 := build(arrow.PrimitiveTypes.Float32, []value{{f: 1}, {f: 2}})
	for _, c := range []struct {
		cols []*arrow.Chunked
		rows int
		want string
	}{
		{nil, 2, "0 columns given, want 1"},
		{[]*arrow.Chunked{i64}, 3, `column "i": 2 rows, want 3`},
		{[]*arrow.Chunked{f32}, 2, `column "i", chunk 0: chunk is float32, compiled for int64`},
	} {
		if _, err := f.Select(c.cols, c.rows); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestMayMatchCases(t *testing.T) {
	ints := func(lo, hi int64) dataset.Stats {
		return dataset.Stats{Rows: 10, HasNullCount: true, HasMinMax: true, Kind: dataset.KindInt, MinI: lo, MaxI: hi, MinF: float64(lo), MaxF: float64(hi)}
	}
	floats := func(lo, hi float64) dataset.Stats {
		return dataset.Stats{Rows: 10, HasNullCount: true, HasMinMax: true, Kind: dataset.KindFloat, MinF: lo, MaxF: hi}
	}
	strs := func(lo, hi string) dataset.Stats {
		return dataset.Stats{Rows: 10, HasNullCount: true, HasMinMax: true, Kind: dataset.KindString, MinS: lo, MaxS: hi}
	}
	p := func(col, op string, v ...config.Scalar) config.Predicate {
		q := config.Predicate{Column: col, Op: op}
		if op == "in" || op == "not_in" {
			q.Values = v
		} else if len(v) > 0 {
			q.Value = v[0]
		}
		return q
	}
	cases := []struct {
		p    config.Predicate
		st   dataset.Stats
		want bool
	}{
		{p("i", "==", num(5)), ints(1, 4), false},
		{p("i", "==", num(4)), ints(1, 4), true},
		{p("i", "==", num(2.5)), ints(1, 4), false},
		{p("i", "<", num(2.5)), ints(3, 4), false},
		{p("i", "<", num(2.5)), ints(2, 4), true},
		{p("i", "<=", num(1)), ints(1, 4), true},
		{p("i", "<", num(1)), ints(1, 4), false},
		{p("i", ">", num(4)), ints(1, 4), false},
		{p("i", ">=", num(4)), ints(1, 4), true},
		{p("i", "!=", num(3)), ints(3, 3), false},
		{p("i", "!=", num(3)), ints(3, 4), true},
		{p("i", "in", num(0), num(9)), ints(1, 4), false},
		{p("i", "in", num(0), num(3)), ints(1, 4), true},
		{p("i", "not_in", num(2), num(3)), ints(3, 3), false},
		{p("i", "not_in", num(2), num(3)), ints(2, 3), true},
		{p("i", "<", num(-1e300)), ints(math.MinInt64, 0), false},
		{p("i", "<=", num(1e300)), ints(0, math.MaxInt64), true},
		{p("f", "==", num(nan)), floats(0, 1), false},
		{p("f", "!=", num(1)), floats(1, 1), true}, // NaN rows are not in the stats
		{p("f", "not_in", num(1)), floats(1, 1), true},
		{p("f", "<", num(1)), floats(1, 2), false},
		{p("f", "<", num(1)), floats(nan, 2), true},
		{p("f", ">", num(1)), floats(0, nan), true},
		{p("f", "in", num(5), num(0.5)), floats(0, 1), true},
		{p("f", "in", num(5), num(1.5)), floats(0, 1), false},
		{p("s", "!=", str("a")), strs("a", "a"), false},
		{p("s", ">=", str("b")), strs("a", "ab"), false},
		{p("s", "in", str("x"), str("a")), strs("b", "c"), false},
		{p("s", "in", str("x"), str("bb")), strs("b", "c"), true},
		{p("i", "is_null"), ints(1, 4), false},
		{p("i", "is_null"), dataset.Stats{Rows: 10}, true},
		{p("i", "not_null"), dataset.Stats{Rows: 10, HasNullCount: true, NullCount: 10}, false},
		{p("i", "==", num(1)), dataset.Stats{Rows: 10, HasNullCount: true, NullCount: 10}, false},
		{p("i", "==", num(1)), dataset.Stats{Rows: 10}, true},
		{p("u", "==", num(1)), dataset.Stats{Rows: 10, HasMinMax: true, Kind: dataset.KindInt, MinI: 5, MaxI: 6}, true},
		{p("i", "==", num(1)), floats(5, 6), true}, // stats of another kind: unknown
	}
	for _, c := range cases {
		f := mustCompile(t, []config.Predicate{c.p})
		if got := f.MayMatch(map[string]dataset.Stats{c.p.Column: c.st}); got != c.want {
			t.Errorf("%s %s %v %v with %+v: %v, want %v", c.p.Column, c.p.Op, c.p.Value, c.p.Values, c.st, got, c.want)
		}
		if !f.MayMatch(nil) {
			t.Errorf("%s %s: missing stats must mean maybe", c.p.Column, c.p.Op)
		}
	}
}
