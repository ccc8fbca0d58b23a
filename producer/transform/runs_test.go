package transform

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
)

// ApplyRuns (typed runs) against ApplyTo (Arrow arrays of the same values): every value
// kind, runs of values and of dictionary indices (another dictionary at each call),
// raw bytes, nulls, runs longer and shorter than a block, for all rows and for
// selections, through steps that take the fused and the dictionary fast paths.

// runCol is a test column: its Arrow type, the kind its runs hold, and a value per row
// (nil: null) as mk takes it.
type runCol struct {
	name string
	typ  arrow.DataType
	kind ValueKind
	vals []any
}

// fakeRun is one run as the fake source gives it, whole; Next hands it out in pieces.
type fakeRun struct {
	v    Values
	dict *Values // for a run of indices
	gen  uint64
}

type fakeRuns struct {
	runs []fakeRun
	at   int // run being handed out
	off  int // rows of it handed out
	dict *Values
	gen  uint64
}

func (f *fakeRuns) Next(n int, out *Values) error {
	if f.at < len(f.runs) && f.off == f.runs[f.at].v.N {
		f.at, f.off = f.at+1, 0
	}
	if f.at >= len(f.runs) {
		return fmt.Errorf("no run left")
	}
	r := &f.runs[f.at]
	m := min(n, r.v.N-f.off)
	lo, hi := f.off, f.off+m
	v := r.v
	*out = Values{N: m, HasNull: v.HasNull, Dict: v.Dict}
	if v.HasNull {
		out.Null = sub(v.Null, lo, hi)
	}
	switch {
	case v.Dict:
		out.Idx = sub(v.Idx, lo, hi)
		f.dict, f.gen = r.dict, r.gen
	case v.Raw != nil:
		size := len(v.Raw) / v.N
		out.Raw = v.Raw[lo*size : hi*size]
	case v.I32 != nil:
		out.I32 = sub(v.I32, lo, hi)
	case v.I64 != nil:
		out.I64 = sub(v.I64, lo, hi)
	case v.F32 != nil:
		out.F32 = sub(v.F32, lo, hi)
	case v.F64 != nil:
		out.F64 = sub(v.F64, lo, hi)
	case v.Bool != nil:
		out.Bool = sub(v.Bool, lo, hi)
	default:
		out.Bin = sub(v.Bin, lo, hi)
	}
	f.off = hi
	return nil
}

// sub is s[lo:hi], as much of it as s holds.
func sub[T any](s []T, lo, hi int) []T { return s[min(lo, len(s)):min(hi, len(s))] }

func (f *fakeRuns) Dictionary() (*Values, uint64) {
	if f.dict == nil {
		return &Values{}, 0
	}
	return f.dict, f.gen
}

// stored puts value x (mk's form) of kind k at position i of v's slice.
func stored(v *Values, k ValueKind, i int, x any) {
	switch k {
	case Int32Values, Int8Values, Int16Values, Uint8Values, Uint16Values, Uint32Values, DecimalInt32Values:
		v.I32[i] = int32(i64(x))
	case DaysValues:
		v.I32[i] = int32(i64(x) / 86400000)
	case Int64Values, DecimalInt64Values:
		v.I64[i] = i64(x)
	case Float32Values:
		v.F32[i] = float32(x.(float64))
	case Float64Values:
		v.F64[i] = x.(float64)
	case BoolValues:
		if x.(bool) {
			v.Bool[i] = 1
		}
	case Float16Values:
		v.Bin[i] = binary.LittleEndian.AppendUint16(nil, toF16(x.(float64)))
	case Decimal128Values, Decimal256Values:
		be := binary.BigEndian.AppendUint64(nil, uint64(i64(x)))
		for len(be) > 1 && (be[0] == 0 && be[1] < 0x80 || be[0] == 0xff && be[1] >= 0x80) {
			be = be[1:] // the shortest form, as writers store it
		}
		v.Bin[i] = be
	default:
		v.Bin[i] = []byte(x.(string))
	}
}

// alloc sizes v's slice of kind k for n values.
func alloc(v *Values, k ValueKind, n int) {
	switch k {
	case Int64Values, DecimalInt64Values:
		v.I64 = make([]int64, n)
	case Float32Values:
		v.F32 = make([]float32, n)
	case Float64Values:
		v.F64 = make([]float64, n)
	case BoolValues:
		v.Bool = make([]byte, n)
	case Float16Values, BytesValues, Decimal128Values, Decimal256Values:
		v.Bin = make([][]byte, n)
	default:
		v.I32 = make([]int32, n)
	}
}

// runsOf cuts c's rows into runs of random lengths, each of values (raw bytes where
// the kind allows and the run has no nulls) or of indices into the column's dictionary
// (of every value, generation gen).
func runsOf(rng *rand.Rand, c runCol, gen uint64) []fakeRun {
	d := &Values{}
	alloc(d, c.kind, len(c.vals))
	seen := map[any]uint32{}
	for _, x := range c.vals {
		if _, ok := seen[x]; x != nil && !ok {
			seen[x] = uint32(len(seen))
			stored(d, c.kind, len(seen)-1, x)
		}
	}
	d.N = len(seen)
	var runs []fakeRun
	for r := 0; r < len(c.vals); {
		n := min(len(c.vals)-r, 1+rng.IntN(700))
		vals := c.vals[r : r+n]
		run := fakeRun{v: Values{N: n, Null: make([]byte, n)}}
		for i, x := range vals {
			if x == nil {
				run.v.Null[i], run.v.HasNull = 1, true
			}
		}
		if rng.IntN(2) == 0 { // indices
			run.v.Dict, run.v.Idx, run.dict, run.gen = true, make([]uint32, n), d, gen
			for i, x := range vals {
				if x != nil {
					run.v.Idx[i] = seen[x]
				}
			}
		} else {
			alloc(&run.v, c.kind, n)
			for i, x := range vals {
				if x != nil {
					stored(&run.v, c.kind, i, x)
				}
			}
			if c.kind.RawBytes() && !run.v.HasNull && rng.IntN(2) == 0 {
				var raw []byte
				for i := range n {
					switch {
					case run.v.F32 != nil:
						raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(run.v.F32[i]))
					case run.v.F64 != nil:
						raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(run.v.F64[i]))
					case run.v.I64 != nil:
						raw = binary.LittleEndian.AppendUint64(raw, uint64(run.v.I64[i]))
					default:
						raw = binary.LittleEndian.AppendUint32(raw, uint32(run.v.I32[i]))
					}
				}
				run.v = Values{N: n, Raw: raw}
			}
		}
		runs = append(runs, run)
		r += n
	}
	return runs
}

func runCols(rows int) []runCol {
	rng := rand.New(rand.NewPCG(21, 22))
	gens := []struct {
		name string
		typ  arrow.DataType
		kind ValueKind
		f    func(k int) any
	}{
		{"i8", arrow.PrimitiveTypes.Int8, Int8Values, func(k int) any { return k%256 - 128 }},
		{"i16", arrow.PrimitiveTypes.Int16, Int16Values, func(k int) any { return k*257%65536 - 32768 }},
		{"u8", arrow.PrimitiveTypes.Uint8, Uint8Values, func(k int) any { return k % 256 }},
		{"u16", arrow.PrimitiveTypes.Uint16, Uint16Values, func(k int) any { return k * 263 % 65536 }},
		{"u32", arrow.PrimitiveTypes.Uint32, Uint32Values, func(k int) any { return int(uint32(k) * 2654435761) }},
		{"i32", arrow.PrimitiveTypes.Int32, Int32Values, func(k int) any { return int(int32(uint32(k) * 2654435761)) }},
		{"i64", arrow.PrimitiveTypes.Int64, Int64Values, func(k int) any { return int(uint64(k) * 0x9e3779b97f4a7c15) }},
		{"u64", arrow.PrimitiveTypes.Uint64, Int64Values, func(k int) any { return uint64(k) * 0x9e3779b97f4a7c15 }},
		{"f16", arrow.FixedWidthTypes.Float16, Float16Values, func(k int) any { return float64(k%301-150) / 8 }},
		{"f32", arrow.PrimitiveTypes.Float32, Float32Values, func(k int) any { return float64(float32(k%1001-500) / 7) }},
		{"f64", arrow.PrimitiveTypes.Float64, Float64Values, func(k int) any { return float64(k%2003-1000) / 3 }},
		{"b", arrow.FixedWidthTypes.Boolean, BoolValues, func(k int) any { return k%3 == 0 }},
		{"d64", arrow.FixedWidthTypes.Date64, DaysValues, func(k int) any { return (k%4000 - 2000) * 86400000 }},
		{"dec32", &arrow.Decimal128Type{Precision: 9, Scale: 2}, DecimalInt32Values, func(k int) any { return k*7919%2000001 - 1000000 }},
		{"dec64", &arrow.Decimal128Type{Precision: 18, Scale: 4}, DecimalInt64Values, func(k int) any { return int(uint64(k)*0x9e3779b97f4a7c15) >> 8 }},
		{"dec128", &arrow.Decimal128Type{Precision: 38, Scale: 6}, Decimal128Values, func(k int) any { return int(uint64(k)*0x9e3779b97f4a7c15) >> (k % 60) }},
		{"dec256", &arrow.Decimal256Type{Precision: 60, Scale: 3}, Decimal256Values, func(k int) any { return k*104729 - 5e8 }},
		{"s", arrow.BinaryTypes.String, BytesValues, func(k int) any { return fmt.Sprintf("s%x", k*2654435761%100003) }},
	}
	cols := make([]runCol, len(gens))
	for j, g := range gens {
		vals := make([]any, rows)
		for r := range vals {
			k := r
			if r%1000 < 400 {
				k = r % 13 // repeats: dictionaries are small
			}
			if rng.IntN(8) != 0 {
				vals[r] = g.f(k + j)
			}
		}
		cols[j] = runCol{g.name, g.typ, g.kind, vals}
	}
	return cols
}

func TestApplyRunsMatchesApplyTo(t *testing.T) {
	const rows = 3000
	cols := runCols(rows)
	rng := rand.New(rand.NewPCG(5, 6))
	byName := map[string]runCol{}
	var nums, ints []string
	for _, c := range cols {
		byName[c.name] = c
		switch {
		case c.kind == BytesValues:
		case c.typ.ID() == arrow.DATE64:
		default:
			nums = append(nums, c.name)
			if _, ok := scalarKind(c.typ.ID()); ok && c.typ.ID() != arrow.FLOAT16 && c.typ.ID() != arrow.FLOAT32 && c.typ.ID() != arrow.FLOAT64 {
				ints = append(ints, c.name)
			}
		}
	}
	norm := config.Transform{Op: config.OpNormalize, Mean: []float64{0.25}, Std: []float64{1.5}}
	hash := config.Transform{Op: config.OpHashBucket, Buckets: 1000, HashSeed: 7}
	type out struct {
		o     config.Output
		names []string
	}
	outs := []out{
		{config.Output{Name: "stacked"}, nums},
		{config.Output{Name: "f32 fused", DType: "float32", Transforms: []config.Transform{fillNum(0), norm}}, []string{"f32"}},
		{config.Output{Name: "f32 norm fill", DType: "float32", Transforms: []config.Transform{norm, fillNum(-1)}}, []string{"f32"}},
		{config.Output{Name: "ints hashed", Transforms: []config.Transform{fillNum(3), hash}}, ints},
		{config.Output{Name: "ints to int8", Transforms: []config.Transform{cast("int8")}}, ints},
		{config.Output{Name: "string", Transforms: []config.Transform{{Op: config.OpFillNull, Fill: config.Scalar{Str: "?", IsStr: true}}, hash}}, []string{"s"}},
		{config.Output{Name: "date64", Transforms: []config.Transform{dt("day_of_year", "")}}, []string{"d64"}},
		{config.Output{Name: "decimal unscaled", Transforms: []config.Transform{{Op: config.OpDecimal, Unscaled: true}}}, []string{"dec128"}},
	}
	for _, n := range nums {
		outs = append(outs, out{config.Output{Name: n + " float64", DType: "float64"}, []string{n}})
	}
	for _, x := range outs {
		fs := make([]arrow.Field, len(x.names))
		arrs := make([]*arrow.Chunked, len(x.names))
		for j, n := range x.names {
			c := mk(n, byName[n].typ, byName[n].vals)
			fs[j], arrs[j] = c.f, c.ch
		}
		o, err := Compile(x.o, fs)
		if err != nil {
			t.Fatalf("%s: %v", x.o.Name, err)
		}
		var st RunState
		for i, sel := range [][]int32{nil, selectEvery(rng, rows, 3), {rows - 1}, {}} {
			in := make([]Column, len(x.names))
			for j, n := range x.names {
				if !o.ReadsValues(j, byName[n].kind) {
					t.Fatalf("%s: column %s does not read %s", x.o.Name, n, byName[n].kind)
				}
				in[j] = Column{Runs: &fakeRuns{runs: runsOf(rng, byName[n], uint64(i))}, Kind: byName[n].kind}
			}
			k := rows
			if sel != nil {
				k = len(sel)
			}
			want, got := make([]byte, k*o.rowBytes(0)), make([]byte, k*o.rowBytes(0))
			if err := o.ApplyTo(arrs, sel, Dest{Bufs: [][]byte{want}, Stride: []int{o.rowBytes(0)}}); err != nil {
				t.Fatalf("%s: ApplyTo: %v", x.o.Name, err)
			}
			if err := o.ApplyRuns(&st, in, rows, sel, Dest{Bufs: [][]byte{got}, Stride: []int{o.rowBytes(0)}}); err != nil {
				t.Fatalf("%s: ApplyRuns: %v", x.o.Name, err)
			}
			if !bytes.Equal(want, got) {
				for i := range want {
					if want[i] != got[i] {
						t.Fatalf("%s, %d rows: byte %d (row %d) is %#x from arrays, %#x from runs", x.o.Name, k, i, i/o.rowBytes(0), want[i], got[i])
					}
				}
			}
		}
	}
}

func selectEvery(rng *rand.Rand, rows, every int) []int32 {
	var sel []int32
	for r := range rows {
		if rng.IntN(every) == 0 {
			sel = append(sel, int32(r))
		}
	}
	return sel
}

// A column of a kind its type does not hold is refused, and so is a run of fewer values
// than rows.
func TestApplyRunsRefuses(t *testing.T) {
	o, err := Compile(config.Output{Name: "x"}, []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int16}})
	if err != nil {
		t.Fatal(err)
	}
	if o.ReadsValues(0, Int32Values) || !o.ReadsValues(0, Int16Values) {
		t.Fatal("an int16 column reads int32 values, or not int16 ones")
	}
	d := Dest{Bufs: [][]byte{make([]byte, 16)}, Stride: []int{8}}
	var st RunState
	if err := o.ApplyRuns(&st, []Column{{Runs: &fakeRuns{}, Kind: Int32Values}}, 2, nil, d); err == nil {
		t.Error("int32 values read as int16")
	}
	short := &fakeRuns{runs: []fakeRun{{v: Values{N: 2, I32: []int32{1}}}}}
	if err := o.ApplyRuns(&st, []Column{{Runs: short, Kind: Int16Values}}, 2, nil, d); err == nil {
		t.Error("a run of 2 rows with 1 value read")
	}
	d1, d2 := &Values{N: 1, I32: []int32{5}}, &Values{N: 1, I32: []int32{6}}
	changing := &fakeRuns{runs: []fakeRun{{v: Values{N: 1, Dict: true, Idx: []uint32{0}}, dict: d1, gen: 1},
		{v: Values{N: 1, Dict: true, Idx: []uint32{0}}, dict: d2, gen: 2}}}
	if err := o.ApplyRuns(&st, []Column{{Runs: changing, Kind: Int16Values}}, 2, nil, d); err == nil || !strings.Contains(err.Error(), "dictionary changed") {
		t.Errorf("a dictionary changing within a column: %v", err)
	}
}
