package filter

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
)

// Integer literals beyond 2^53 compare exactly: a float64 constant would round
// 2^63-1 up to 2^63 and match nothing.
func TestBigIntegerLiterals(t *testing.T) {
	ints := []value{{i: math.MaxInt64}, {i: math.MaxInt64 - 1}, {i: math.MinInt64}, {i: 1 << 53}, {i: 1<<53 + 1}, {null: true}}
	uints := []value{{u: math.MaxUint64}, {u: math.MaxUint64 - 1}, {u: 1 << 63}, {u: 0}}
	lit := func(s string) config.Scalar {
		cfg, err := config.Parse([]byte(fmt.Sprintf("filter: [{column: x, op: '==', value: %s}]", s)), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Filter[0].Value
	}
	for _, tc := range []struct {
		typ  arrow.DataType
		vals []value
		op   string
		lit  string
		want []int32
	}{
		{arrow.PrimitiveTypes.Int64, ints, "==", "9223372036854775807", []int32{0}},
		{arrow.PrimitiveTypes.Int64, ints, "!=", "9223372036854775807", []int32{1, 2, 3, 4}},
		{arrow.PrimitiveTypes.Int64, ints, "<", "9223372036854775807", []int32{1, 2, 3, 4}},
		{arrow.PrimitiveTypes.Int64, ints, ">", "9223372036854775806", []int32{0}},
		{arrow.PrimitiveTypes.Int64, ints, "==", "9007199254740993", []int32{4}},
		{arrow.PrimitiveTypes.Int64, ints, "<=", "-9223372036854775808", []int32{2}},
		{arrow.PrimitiveTypes.Int64, ints, "<", "18446744073709551615", []int32{0, 1, 2, 3, 4}},
		{arrow.PrimitiveTypes.Int64, ints, ">", "9223372036854775808", nil},
		{arrow.PrimitiveTypes.Uint64, uints, "==", "18446744073709551615", []int32{0}},
		{arrow.PrimitiveTypes.Uint64, uints, ">=", "18446744073709551614", []int32{0, 1}},
		{arrow.PrimitiveTypes.Uint64, uints, ">", "-1", []int32{0, 1, 2, 3}},
		{arrow.PrimitiveTypes.Uint64, uints, "<", "9223372036854775808", []int32{3}},
	} {
		p := config.Predicate{Column: "x", Op: tc.op, Value: lit(tc.lit)}
		f, err := Compile([]config.Predicate{p}, map[string]arrow.Field{"x": {Name: "x", Type: tc.typ, Nullable: true}})
		if err != nil {
			t.Fatal(err)
		}
		col := build(tc.typ, tc.vals)
		got, err := f.Select([]*arrow.Chunked{col}, len(tc.vals))
		col.Release()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s x %s %s: rows %v, want %v", tc.typ, tc.op, tc.lit, got, tc.want)
		}
		set := config.Predicate{Column: "x", Op: config.PredIn, Values: []config.Scalar{p.Value}}
		if tc.op == "==" {
			fs, _ := Compile([]config.Predicate{set}, map[string]arrow.Field{"x": {Name: "x", Type: tc.typ, Nullable: true}})
			col := build(tc.typ, tc.vals)
			got, _ := fs.Select([]*arrow.Chunked{col}, len(tc.vals))
			col.Release()
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s x in [%s]: rows %v, want %v", tc.typ, tc.lit, got, tc.want)
			}
		}
	}
}
