package filter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
)

var (
	nan  = math.NaN()
	inf  = math.Inf(1)
	ops  = []string{config.PredEq, config.PredNe, config.PredLt, config.PredLe, config.PredGt, config.PredGe}
	null = value{null: true}
)

func num(v float64) config.Scalar { return config.Scalar{Num: v} }
func str(s string) config.Scalar  { return config.Scalar{Str: s, IsStr: true} }

// testColumns: each type with its awkward values.
func testColumns() map[arrow.DataType][]value {
	ints := []value{{i: 0}, {i: 1}, {i: -1}, {i: 2}, {i: 3}, null, {i: math.MaxInt64}, {i: math.MinInt64}, {i: 1 << 53}, {i: 1<<53 + 1}, {i: -7}}
	i8 := []value{{i: 0}, {i: 127}, {i: -128}, null, {i: 2}, {i: 3}}
	u64 := []value{{u: 0}, {u: 1}, {u: 1<<64 - 1}, {u: 1 << 63}, null, {u: 3}, {u: 1<<53 + 1}}
	floats := []value{{f: 0}, {f: math.Copysign(0, -1)}, {f: 2.5}, {f: -1}, {f: nan}, null, {f: inf}, {f: -inf}, {f: 0.1}, {f: 3}, {f: 1e300}}
	strs := []value{{s: ""}, {s: "a"}, {s: "ab"}, {s: "b"}, null, {s: "é"}, {s: "B"}}
	bools := []value{{b: true}, {b: false}, null}
	return map[arrow.DataType][]value{
		arrow.PrimitiveTypes.Int64: ints, arrow.PrimitiveTypes.Int32: i8, arrow.PrimitiveTypes.Int8: i8,
		arrow.PrimitiveTypes.Uint64: u64, arrow.PrimitiveTypes.Float64: floats, arrow.PrimitiveTypes.Float32: floats,
		arrow.BinaryTypes.String: strs, arrow.BinaryTypes.Binary: strs, arrow.FixedWidthTypes.Boolean: bools,
	}
}

var numConsts = []float64{0, math.Copysign(0, -1), 0.5, 1, 2, 2.5, 3, -1, -1.5, 0.1, float64(float32(0.1)), 127, 127.5, -128.5,
	1 << 53, 1<<53 + 2, 1 << 63, -(1 << 63), 1 << 64, 1e300, -1e300, inf, -inf, nan}
var strConsts = []string{"", "a", "aa", "ab", "b", "B", "é", "z"}

// TestSelectAgainstBrute: every operator and constant on every type, Select against an
// exact cell-by-cell evaluation, on data cut into chunks.
func TestSelectAgainstBrute(t *testing.T) {
	for typ, vals := range testColumns() {
		col := build(typ, vals, 2, 2, 5)
		isStr := typ.ID() == arrow.STRING || typ.ID() == arrow.BINARY
		var preds []config.Predicate
		if isStr {
			for _, op := range ops {
				for _, c := range strConsts {
					preds = append(preds, config.Predicate{Column: "x", Op: op, Value: str(c)})
				}
			}
			preds = append(preds, config.Predicate{Column: "x", Op: config.PredIn, Values: []config.Scalar{str("b"), str(""), str("q")}},
				config.Predicate{Column: "x", Op: config.PredNotIn, Values: []config.Scalar{str("b"), str("")}})
		} else {
			for _, op := range ops {
				for _, c := range numConsts {
					preds = append(preds, config.Predicate{Column: "x", Op: op, Value: num(c)})
				}
			}
			sets := [][]float64{{0, 2.5, 3}, {nan}, {1 << 63, 1 << 64, -1}, {1, 0.5, 1e300}, {}}
			for _, s := range sets {
				var vs []config.Scalar
				for _, c := range s {
					vs = append(vs, num(c))
				}
				preds = append(preds, config.Predicate{Column: "x", Op: config.PredIn, Values: vs},
					config.Predicate{Column: "x", Op: config.PredNotIn, Values: vs})
			}
		}
		preds = append(preds, config.Predicate{Column: "x", Op: config.PredNull}, config.Predicate{Column: "x", Op: config.PredNotNull})
		for _, p := range preds {
			f, err := Compile([]config.Predicate{p}, map[string]arrow.Field{"x": {Name: "x", Type: typ}})
			if err != nil {
				t.Fatalf("%s %s: %v", typ, p.Op, err)
			}
			sel, err := f.Select([]*arrow.Chunked{col}, len(vals))
			if err != nil {
				t.Fatal(err)
			}
			var want []int32
			for i, v := range vals {
				if brute(typ, v, p) {
					want = append(want, int32(i))
				}
			}
			if sel == nil || fmt.Sprint(sel) != fmt.Sprint(want) {
				t.Errorf("%s: x %s %v %v: rows %v, want %v", typ, p.Op, p.Value, p.Values, sel, want)
			}
		}
	}
}

// TestMayMatchNeverWrong: random small row groups and random AND-ed predicates; whenever
// Select finds a row, MayMatch must have said maybe. Also checks that pushdown prunes
// at least sometimes, so the test is not vacuous.
func TestMayMatchNeverWrong(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.BinaryTypes.String}
	names := []string{"i", "f", "g", "s"}
	fields := map[string]arrow.Field{}
	for k, n := range names {
		fields[n] = arrow.Field{Name: n, Type: types[k]}
	}
	pruned := 0
	for trial := range 4000 {
		rows := rng.IntN(6)
		cols := make([]*arrow.Chunked, len(names))
		stats := map[string]dataset.Stats{}
		for k, typ := range types {
			vals := make([]value, rows)
			for r := range vals {
				switch x := rng.IntN(10); {
				case x == 0:
					vals[r] = null
				case x == 1 && typ.ID() != arrow.INT64:
					vals[r] = value{f: nan}
				default:
					n := rng.IntN(9) - 4
					vals[r] = value{i: int64(n), f: float64(n) / 2, s: strings.Repeat("a", max(n, 0)) + "b"[:rng.IntN(2)]}
				}
			}
			cols[k] = build(typ, vals)
			st := statsOf(typ, vals)
			if rng.IntN(8) == 0 {
				st.HasMinMax = false
			}
			if rng.IntN(8) == 0 {
				st.HasNullCount = false
			}
			if rng.IntN(8) == 0 && st.Kind == dataset.KindFloat {
				st.MinF = nan
			}
			stats[names[k]] = st
		}
		var preds []config.Predicate
		for range 1 + rng.IntN(2) {
			k := rng.IntN(len(names))
			p := config.Predicate{Column: names[k], Op: append(ops, config.PredIn, config.PredNotIn, config.PredNull, config.PredNotNull)[rng.IntN(10)]}
			mkc := func() config.Scalar {
				if types[k].ID() == arrow.STRING {
					return str(strConsts[rng.IntN(len(strConsts))])
				}
				return num([]float64{-2, -1, -0.5, 0, 0.5, 1, 1.5, 2, 4, nan, inf}[rng.IntN(11)])
			}
			p.Value = mkc()
			for range rng.IntN(3) {
				p.Values = append(p.Values, mkc())
			}
			preds = append(preds, p)
		}
		f, err := Compile(preds, fields)
		if err != nil {
			t.Fatal(err)
		}
		in := make([]*arrow.Chunked, 0, len(f.Columns()))
		for _, c := range f.Columns() {
			in = append(in, cols[map[string]int{"f": 1, "g": 2, "i": 0, "s": 3}[c]])
		}
		sel, err := f.Select(in, rows)
		if err != nil {
			t.Fatal(err)
		}
		may := f.MayMatch(stats)
		if len(sel) > 0 && !may {
			t.Fatalf("trial %d: %+v: rows %v pass but MayMatch is false; stats %+v", trial, preds, sel, stats)
		}
		if !may {
			pruned++
		}
	}
	if pruned < 200 {
		t.Errorf("only %d of 4000 row groups pruned", pruned)
	}
}
