package transform

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

func fld(name string, t arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: t} }

var (
	strT  = arrow.BinaryTypes.String
	listT = arrow.ListOf(f32t)
	padT  = config.Transform{Op: config.OpPad, Length: 4}
	hashT = config.Transform{Op: config.OpHashBucket, Buckets: 10}
)

func TestCompileErrors(t *testing.T) {
	nums := []arrow.Field{fld("a", f32t), fld("b", f32t), fld("c", i64t), fld("d", f32t), fld("e", f32t)}
	std3 := config.Transform{Op: config.OpNormalize, Mean: []float64{0}, Std: []float64{1, 2, 3}, Line: 14}
	cases := []struct {
		name   string
		o      config.Output
		fields []arrow.Field
		want   string
	}{
		{"std per column", config.Output{Name: "features", Line: 10, Transforms: []config.Transform{cast("float32"), std3}}, nums,
			`line 14: output "features", transform 2 (normalize): std has 3 values for 5 columns`},
		{"no line", config.Output{Name: "f", Transforms: []config.Transform{{Op: "sqrt"}}}, nums,
			`output "f", transform 1 (sqrt): unknown transform "sqrt"`},
		{"output line", config.Output{Name: "f", Line: 3}, []arrow.Field{fld("t", arrow.FixedWidthTypes.Duration_s)},
			`line 3: output "f": column "t": type duration[s] is not supported`},
		{"no columns", config.Output{Name: "f"}, nil, "no columns"},
		{"unknown dtype", config.Output{Name: "f", DType: "float8"}, nums, `dtype: unknown dtype "float8"`},
		{"cast dtype", config.Output{Name: "f", Transforms: []config.Transform{cast("int128")}}, nums, `transform 1 (cast): unknown dtype "int128"`},
		{"mix", config.Output{Name: "f", Transforms: []config.Transform{hashT}}, []arrow.Field{fld("s", strT), fld("n", i64t)},
			"mixes string columns (s) with numeric columns (n)"},
		{"list with others", config.Output{Name: "f", Transforms: []config.Transform{padT}}, []arrow.Field{fld("l", listT), fld("n", i64t)},
			`list column "l" must be the output's only column`},
		{"list without pad", config.Output{Name: "f"}, []arrow.Field{fld("l", listT)}, "a list column needs a pad transform"},
		{"pad without list", config.Output{Name: "f", Transforms: []config.Transform{padT}}, nums, "pad needs a list column"},
		{"pad twice", config.Output{Name: "f", Transforms: []config.Transform{padT, padT}}, []arrow.Field{fld("l", listT)}, "transform 2 (pad): a second pad"},
		{"pad length", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpPad}}}, []arrow.Field{fld("l", listT)}, "length 0 outside 1.."},
		{"list of bools", config.Output{Name: "f"}, []arrow.Field{fld("l", arrow.ListOf(arrow.FixedWidthTypes.Boolean))}, `column "l": type list<item: bool, nullable> is not supported`},
		{"list of strings unpadded", config.Output{Name: "f"}, []arrow.Field{fld("l", arrow.ListOf(strT))}, `a list column needs a pad transform`},
		{"hash float", config.Output{Name: "f", Transforms: []config.Transform{hashT}}, nums,
			`output "f", column "a" (float32), transform 1 (hash_bucket): hash_bucket takes integers or strings`},
		{"string unhashed", config.Output{Name: "f"}, []arrow.Field{fld("s", strT)}, `column "s" (utf8): a string column needs hash_bucket`},
		{"string cast", config.Output{Name: "f", Transforms: []config.Transform{cast("int64"), hashT}}, []arrow.Field{fld("s", strT)},
			"transform 1 (cast): a string column takes only fill_null and hash_bucket until it is hashed"},
		{"string numeric fill", config.Output{Name: "f", Transforms: []config.Transform{fillNum(1), hashT}}, []arrow.Field{fld("s", strT)},
			"fill 1 is a number but the column holds strings"},
		{"numeric string fill", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpFillNull, Fill: config.Scalar{Str: "x", IsStr: true}}}}, nums,
			`fill "x" is a string`},
		{"int fill fraction", config.Output{Name: "f", Transforms: []config.Transform{fillNum(0.5)}}, nums,
			`column "c" (int64), transform 1 (fill_null): fill 0.5 is not an integer`},
		{"uint fill negative", config.Output{Name: "f", Transforms: []config.Transform{fillNum(-1)}}, []arrow.Field{fld("u", arrow.PrimitiveTypes.Uint64)},
			"fill -1 is outside the uint64 range"},
		{"int clip fraction", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpClip, Max: fp(2.5)}}}, nums,
			`column "c" (int64), transform 1 (clip): bound 2.5 is not an integer`},
		{"clip empty", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpClip}}}, nums, "clip needs min, max or both"},
		{"clip order", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpClip, Min: fp(2), Max: fp(1)}}}, nums, "min 2 is above max 1"},
		{"clip NaN", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpClip, Min: fp(nan)}}}, nums, "cannot be NaN"},
		{"std zero", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpNormalize, Mean: []float64{0}, Std: []float64{0}}}}, nums, "std value 1 is 0"},
		{"mean missing", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpNormalize, Std: []float64{1}}}}, nums, "mean has 0 values for 5 columns"},
		{"bounds order", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpBucketize, Boundaries: []float64{1, 1}}}}, nums, "boundaries must increase strictly: 1 follows 1"},
		{"bounds empty", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpBucketize}}}, nums, "no boundaries"},
		{"buckets", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpHashBucket}}}, nums, "buckets must be at least 1"},
		{"int pad value", config.Output{Name: "f", Transforms: []config.Transform{{Op: config.OpPad, Length: 2, PadValue: 0.5}}},
			[]arrow.Field{fld("l", arrow.ListOf(i64t))}, "pad_value 0.5 is not an integer"},
	}
	for _, c := range cases {
		_, err := Compile(c.o, c.fields)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestCompileTensors(t *testing.T) {
	bk := config.Transform{Op: config.OpBucketize, Boundaries: []float64{1}}
	cases := []struct {
		name   string
		o      config.Output
		fields []arrow.Field
		want   []ring.TensorSpec
	}{
		{"one float", config.Output{Name: "x"}, []arrow.Field{fld("a", f64t)}, []ring.TensorSpec{{Name: "x", DType: ring.Float32}}},
		{"one int", config.Output{Name: "x"}, []arrow.Field{fld("a", i32t)}, []ring.TensorSpec{{Name: "x", DType: ring.Int64}}},
		{"stacked ints", config.Output{Name: "x"}, []arrow.Field{fld("a", i32t), fld("b", i64t), fld("c", arrow.FixedWidthTypes.Boolean)},
			[]ring.TensorSpec{{Name: "x", DType: ring.Int64, Shape: []int{3}}}},
		{"int and float", config.Output{Name: "x"}, []arrow.Field{fld("a", i32t), fld("b", arrow.FixedWidthTypes.Float16)},
			[]ring.TensorSpec{{Name: "x", DType: ring.Float32, Shape: []int{2}}}},
		{"dtype wins", config.Output{Name: "x", DType: "bfloat16", Transforms: []config.Transform{cast("int8")}}, []arrow.Field{fld("a", f64t)},
			[]ring.TensorSpec{{Name: "x", DType: ring.BFloat16}}},
		{"last cast", config.Output{Name: "x", Transforms: []config.Transform{cast("int8"), cast("float16"), bk}}, []arrow.Field{fld("a", f64t)},
			[]ring.TensorSpec{{Name: "x", DType: ring.Float16}}},
		{"bucketize", config.Output{Name: "x", Transforms: []config.Transform{bk}}, []arrow.Field{fld("a", f64t)},
			[]ring.TensorSpec{{Name: "x", DType: ring.Int64}}},
		{"strings", config.Output{Name: "x", Transforms: []config.Transform{hashT}}, []arrow.Field{fld("a", strT), fld("b", arrow.BinaryTypes.LargeString)},
			[]ring.TensorSpec{{Name: "x", DType: ring.Int64, Shape: []int{2}}}},
		{"pad", config.Output{Name: "x", Transforms: []config.Transform{padT}}, []arrow.Field{fld("a", listT)},
			[]ring.TensorSpec{{Name: "x", DType: ring.Float32, Shape: []int{4}}, {Name: "x_len", DType: ring.Int32}}},
	}
	for _, c := range cases {
		out, err := Compile(c.o, c.fields)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := out.Tensors()
		for i := range got {
			if len(got[i].Shape) == 0 {
				got[i].Shape = nil
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: tensors %+v, want %+v", c.name, got, c.want)
		}
		if out.Name() != "x" || len(out.Columns()) != len(c.fields) || out.Columns()[0] != c.fields[0].Name {
			t.Errorf("%s: name %q columns %v", c.name, out.Name(), out.Columns())
		}
	}
}

// A struct column is refused with the dotted paths its fields are read by.
func TestStructColumnNamesItsFieldPaths(t *testing.T) {
	inner := arrow.StructOf(arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int64})
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Float32}, arrow.Field{Name: "b", Type: inner})
	_, err := Compile(config.Output{Name: "x"}, []arrow.Field{{Name: "s", Type: st}})
	if err == nil || !strings.Contains(err.Error(), `dotted paths: "s.a", "s.b.c"`) {
		t.Fatalf("got %v", err)
	}
}
