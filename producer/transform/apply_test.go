package transform

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// TestStackOrderChunksSel: three columns of different types, cut into chunks at
// different places, stacked in the given order, for all rows and for subsets.
func TestStackOrderChunksSel(t *testing.T) {
	a := mk("a", i32t, []any{0, 1, 2}, []any{3, 4, 5, 6})
	b := mk("b", f32t, []any{10.0, 11.0, nil, 13.0, 14.0, 15.0, 16.0})
	c := mk("c", f64t, []any{20.0}, []any{}, []any{21.5}, []any{22.0, 23.0, 24.0, 25.0, 26.0})
	full := [][]float64{{0, 10, 20}, {1, 11, 21.5}, {2, nan, 22}, {3, 13, 23}, {4, 14, 24}, {5, 15, 25}, {6, 16, 26}}
	for _, sel := range [][]int32{nil, {}, {0}, {6}, {0, 2, 3, 6}, {2, 3, 4}, {1, 5}} {
		out, dst := run(t, steps(), sel, a, b, c)
		if sh := out.Tensors()[0].Shape; len(sh) != 1 || sh[0] != 3 {
			t.Fatalf("shape %v", sh)
		}
		var want []float64
		rows := sel
		if rows == nil {
			rows = []int32{0, 1, 2, 3, 4, 5, 6}
		}
		for _, r := range rows {
			want = append(want, full[r]...)
		}
		testkit.SameFloats(t, "rows", f32s(dst[0]), want)
	}
	// The other order gives the other layout.
	_, dst := run(t, steps(), []int32{1}, c, a)
	testkit.SameFloats(t, "c, a", f32s(dst[0]), []float64{21.5, 1})
}

// TestManyRowsAgainstFormula: thousands of rows across block and chunk edges, random
// nulls, NaNs and selections; each value checked against fill_null + normalize + clip
// computed here value by value.
func TestManyRowsAgainstFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, ncol = 3000, 5
	data := make([][]any, ncol)
	cols := make([]col, ncol)
	mean, std := make([]float64, ncol), make([]float64, ncol)
	for j := range cols {
		data[j] = make([]any, rows)
		for r := range data[j] {
			switch x := rng.IntN(20); {
			case x == 0:
				data[j][r] = nil
			case x == 1:
				data[j][r] = nan
			default:
				data[j][r] = rng.NormFloat64() * 10
			}
		}
		var chunks [][]any
		for lo := 0; lo < rows; {
			hi := min(rows, lo+1+rng.IntN(700))
			chunks = append(chunks, data[j][lo:hi])
			lo = hi
		}
		cols[j] = mk(string(rune('a'+j)), f64t, chunks...)
		mean[j], std[j] = rng.Float64(), 1+rng.Float64()
	}
	o := steps(fillNum(-3), config.Transform{Op: config.OpNormalize, Mean: mean, Std: std},
		config.Transform{Op: config.OpClip, Min: fp(-2), Max: fp(2)})
	o.DType = "float64"
	for trial := range 4 {
		var sel []int32
		if trial > 0 {
			sel = []int32{}
			for r := range int32(rows) {
				if rng.IntN(trial+1) == 0 {
					sel = append(sel, r)
				}
			}
		}
		_, dst := run(t, o, sel, cols...)
		var want []float64
		for k := range rows {
			r := k
			if sel != nil {
				if k >= len(sel) {
					break
				}
				r = int(sel[k])
			}
			for j := range ncol {
				x := -3.0
				if data[j][r] != nil {
					x = data[j][r].(float64)
				}
				x = (x - mean[j]) / std[j]
				want = append(want, math.Max(-2, math.Min(2, x)))
				if math.IsNaN(x) {
					want[len(want)-1] = nan
				}
			}
		}
		testkit.SameFloats(t, "values", testkit.F64s(dst[0]), want)
	}
}

func TestApplyErrors(t *testing.T) {
	a := mk("a", f32t, []any{1.0, 2.0})
	b := mk("b", f32t, []any{1.0})
	fs, _ := fieldsOf([]col{a, b})
	out, err := Compile(config.Output{Name: "o"}, fs)
	if err != nil {
		t.Fatal(err)
	}
	dst := [][]byte{make([]byte, 16)}
	wrongType := mk("b", i32t, []any{1, 2})
	cases := []struct {
		cols []*arrow.Chunked
		sel  []int32
		dst  [][]byte
		want string
	}{
		{[]*arrow.Chunked{a.ch}, nil, dst, "1 columns given, want 2"},
		{[]*arrow.Chunked{a.ch, b.ch}, nil, dst, `column "b": 1 rows, but column "a" has 2`},
		{[]*arrow.Chunked{a.ch, wrongType.ch}, nil, dst, `column "b": chunk 0 is int32, compiled for float32`},
		{[]*arrow.Chunked{a.ch, a.ch}, []int32{1, 0}, dst, "selected row 1 is 0"},
		{[]*arrow.Chunked{a.ch, a.ch}, []int32{2}, dst, "selected row 0 is 2"},
		{[]*arrow.Chunked{a.ch, a.ch}, nil, [][]byte{make([]byte, 15)}, "15 bytes for 2 rows 8 bytes apart, want 16"},
		{[]*arrow.Chunked{a.ch, a.ch}, nil, nil, "0 destination buffers and 0 strides, want 1"},
	}
	for _, c := range cases {
		err := out.Apply(c.cols, c.sel, c.dst)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestConcurrentApply: one Output, many goroutines, each result equal to the serial one.
func TestConcurrentApply(t *testing.T) {
	norm := config.Transform{Op: config.OpNormalize, Mean: []float64{0.5}, Std: []float64{2}}
	o := steps(fillNum(0), norm)
	var cols []col
	for j := range 8 {
		vals := make([]any, 2000)
		for r := range vals {
			vals[r] = float64(r*j%97) - 40
			if r%13 == j {
				vals[r] = nil
			}
		}
		cols = append(cols, mk(string(rune('a'+j)), f32t, vals[:999], vals[999:]))
	}
	fs, cs := fieldsOf(cols)
	out, err := Compile(config.Output{Name: "x", Transforms: o.Transforms}, fs)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 2000*8*4)
	if err := out.Apply(cs, nil, [][]byte{want}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 20 {
				got := make([]byte, len(want))
				if err := out.Apply(cs, nil, [][]byte{got}); err != nil || !bytes.Equal(got, want) {
					t.Errorf("goroutine %d: err %v, equal %v", g, err, bytes.Equal(got, want))
					return
				}
			}
		})
	}
	wg.Wait()
}
