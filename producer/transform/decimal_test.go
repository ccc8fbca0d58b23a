package transform

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// words is v as 4 two's complement words.
func words(v *big.Int) []uint64 {
	m := new(big.Int).And(v, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)))
	w := make([]uint64, 4)
	for i := range w {
		w[i] = new(big.Int).Rsh(m, uint(64*i)).Uint64()
	}
	return w
}

// exactFloat is the float64 nearest to v × 10^-scale, by exact rational arithmetic.
func exactFloat(v *big.Int, scale int32) float64 {
	r := new(big.Rat).SetInt(v)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(scale, -scale))), nil)
	if scale >= 0 {
		r.Quo(r, new(big.Rat).SetInt(p))
	} else {
		r.Mul(r, new(big.Rat).SetInt(p))
	}
	f, _ := r.Float64()
	return f
}

// TestDecFloat: decimals become the nearest float64, ties to even, whatever the width,
// the scale and the sign; the int64 fast path agrees with the exact one.
func TestDecFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(1 << 53), big.NewInt(1<<53 + 1),
		big.NewInt(-(1<<53 + 1)), big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64),
		new(big.Int).Lsh(big.NewInt(1), 255), new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 255)),
		// 9007199254740993 / 10^k: exactly between two float64s at k = 0.
		big.NewInt(9007199254740993), big.NewInt(-9007199254740993)}
	// Exact ties between two float64s after the division, and their neighbours.
	for sc := range int64(28) {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(sc), nil)
		for _, m := range []int64{1<<53 + 1, 1<<53 + 3, 1<<54 + 2, 1<<54 + 6} {
			tie := new(big.Int).Mul(big.NewInt(m), p)
			for _, d := range []int64{-1, 0, 1} {
				v := new(big.Int).Add(tie, big.NewInt(d))
				vals = append(vals, v, new(big.Int).Neg(v))
			}
		}
	}
	for range 4000 {
		b := make([]byte, 1+rng.IntN(32))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		v := new(big.Int).SetBytes(b)
		v.Rsh(v, uint(rng.IntN(8)+1)) // below 2^255
		if rng.IntN(2) == 0 {
			v.Neg(v)
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		for _, scale := range []int32{0, 1, 2, 3, 6, 10, 18, 22, 23, 26, 27, 28, 38, 76, -1, -5, -22, -30, 300, -300} {
			if v.BitLen() > 255 {
				continue
			}
			w := words(v)
			got, want := decFloat(w, scale), exactFloat(v, scale)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%s × 10^-%d: %v (%x), want %v (%x)", v, scale, got, math.Float64bits(got), want, math.Float64bits(want))
			}
			if v.IsInt64() {
				if got := decFloat64(v.Int64(), scale); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("decFloat64(%s, %d) = %v, want %v", v, scale, got, want)
				}
			}
		}
	}
	// Values Python prints: float(Decimal("0.1")), float(Decimal("-123.45")), ...
	for _, c := range []struct {
		v     int64
		scale int32
		want  float64
	}{{1, 1, 0.1}, {-12345, 2, -123.45}, {7, 0, 7}, {1, 18, 1e-18}, {123456789012345678, 18, 0.12345678901234568}} {
		if got := decFloat64(c.v, c.scale); got != c.want {
			t.Errorf("%d × 10^-%d = %v, want %v", c.v, c.scale, got, c.want)
		}
	}
}

func TestDecInt(t *testing.T) {
	w := func(v int64) []uint64 { return words(big.NewInt(v)) }
	huge := words(new(big.Int).Lsh(big.NewInt(1), 70))
	neg := words(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 70)))
	for _, c := range []struct {
		w     []uint64
		shift int32
		want  int64
	}{
		{w(123), 0, 123}, {w(-123), 2, -12300}, {w(0), 40, 0}, {w(1), 18, 1e18}, {w(1), 19, math.MaxInt64},
		{w(-1), 19, math.MinInt64}, {w(math.MaxInt64 / 10), 1, math.MaxInt64 / 10 * 10},
		{w(math.MaxInt64/10 + 1), 1, math.MaxInt64}, {w(math.MinInt64 / 10), 1, math.MinInt64 / 10 * 10},
		{w(math.MinInt64/10 - 1), 1, math.MinInt64}, {huge, 0, math.MaxInt64}, {neg, 0, math.MinInt64},
		{w(math.MinInt64), 0, math.MinInt64},
	} {
		if got := decInt(c.w, c.shift); got != c.want {
			t.Errorf("decInt(%v, %d) = %d, want %d", c.w, c.shift, got, c.want)
		}
	}
}

// TestBeWords: big-endian two's complement of every length reads as the same integer.
func TestBeWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		b := make([]byte, 1+rng.IntN(32))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := new(big.Int).SetBytes(b)
		if b[0] >= 0x80 {
			want.Sub(want, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		var buf [4]uint64
		got := beWords(b, &buf)
		for i, x := range words(want) {
			if got[i] != x {
				t.Fatalf("beWords(%x) = %x, want %s", b, got, want)
			}
		}
		if len(b) <= 8 && beInt64(b) != want.Int64() {
			t.Fatalf("beInt64(%x) = %d, want %s", b, beInt64(b), want)
		}
	}
}

func dec128(s string) decimal128.Num {
	v, _ := new(big.Int).SetString(s, 10)
	return decimal128.FromBigInt(v)
}

func dec256(s string) decimal256.Num {
	v, _ := new(big.Int).SetString(s, 10)
	return decimal256.FromBigInt(v)
}

// TestDecimalColumns: every decimal width reads as floats by default and as exact,
// saturating integers with the decimal step.
func TestDecimalColumns(t *testing.T) {
	d128 := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	vals := []any{dec128("12345"), dec128("-1"), nil, dec128("99999999999999999999999999999999999999"), dec128("0")}
	o := config.Output{DType: "float64"}
	_, dst := run(t, o, nil, mk("d", d128, vals))
	testkit.SameFloats(t, "decimal128 float", testkit.F64s(dst[0]), []float64{123.45, -0.01, nan, 999999999999999999999999999999999999.99, 0})

	_, dst = run(t, steps(config.Transform{Op: config.OpDecimal, Unscaled: true}), nil, mk("d", d128, vals))
	testkit.SameInts(t, "decimal128 unscaled", testkit.Int64s(dst[0]), []int64{12345, -1, 0, math.MaxInt64, 0})
	_, dst = run(t, steps(config.Transform{Op: config.OpDecimal, Scale: 4}), nil, mk("d", d128, vals))
	testkit.SameInts(t, "decimal128 scale 4", testkit.Int64s(dst[0]), []int64{1234500, -100, 0, math.MaxInt64, 0})
	_, dst = run(t, steps(config.Transform{Op: config.OpDecimal, Scale: 4},
		config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Num: 7, IsInt: true, Int: 7}}), nil, mk("d", d128, vals))
	testkit.SameInts(t, "decimal128 scale 4, fill_null", testkit.Int64s(dst[0]), []int64{1234500, -100, 7, math.MaxInt64, 0})

	d256 := &arrow.Decimal256Type{Precision: 76, Scale: 40}
	v256 := []any{dec256("-" + strings.Repeat("9", 76)), dec256("1"), dec256("12345678901234567890123456789012345678901234567890")}
	_, dst = run(t, config.Output{DType: "float64"}, nil, mk("d", d256, v256))
	testkit.SameFloats(t, "decimal256 float", testkit.F64s(dst[0]), []float64{-999999999999999999999999999999999999.9999999999999999999999999999999999999999,
		1e-40, 1234567890.1234567890123456789012345678901234567890})

	// Stacked with floats, a decimal is one more float column.
	out, dst := run(t, config.Output{}, nil, mk("d", &arrow.Decimal128Type{Precision: 5, Scale: 1}, []any{15}), mk("f", arrow.PrimitiveTypes.Float64, []any{2.5}))
	if out.dtype.String() != "float32" {
		t.Errorf("default dtype %s", out.dtype)
	}
	testkit.SameFloats(t, "stacked", f32s(dst[0]), []float64{1.5, 2.5})

	for _, c := range []struct {
		typ  arrow.DataType
		o    config.Output
		want string
	}{
		{d128, steps(config.Transform{Op: config.OpDecimal, Scale: 1}), "scale 1 is below the column's 2"},
		{arrow.PrimitiveTypes.Float64, steps(config.Transform{Op: config.OpDecimal, Unscaled: true}), "decimal takes decimal columns"},
		{d128, steps(config.Transform{Op: config.OpLog1p}, config.Transform{Op: config.OpDecimal, Unscaled: true}), "decimal takes decimal columns as their first step"},
		{d128, steps(config.Transform{Op: config.OpHashBucket, Buckets: 5}), "cast the floats"},
	} {
		_, err := Compile(withName(c.o), []arrow.Field{{Name: "d", Type: c.typ}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want %q", c.typ, c.o.Transforms, err, c.want)
		}
	}
}

// TestDictionaryStrings: a dictionary of strings hashes as its values.
func TestDictionaryStrings(t *testing.T) {
	hb := steps(config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Str: "?", IsStr: true}},
		config.Transform{Op: config.OpHashBucket, Buckets: 1000})
	vals := []any{"a", "bb", nil, "a", ""}
	want := []any{"a", "bb", "?", "a", ""}
	for _, vt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary} {
		for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint16} {
			typ := &arrow.DictionaryType{IndexType: it, ValueType: vt}
			_, got := run(t, hb, []int32{0, 2, 4}, mk("s", typ, vals))
			_, ref := run(t, hb, []int32{0, 2, 4}, mk("s", arrow.BinaryTypes.String, want))
			testkit.SameInts(t, typ.String(), testkit.Int64s(got[0]), testkit.Int64s(ref[0]))
		}
	}
	_, err := Compile(withName(config.Output{}), []arrow.Field{{Name: "s", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int64}}})
	if err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("dictionary of ints: %v", err)
	}
}
