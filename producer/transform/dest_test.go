package transform

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
)

// TestApplyToRecords: writing every tensor of a row side by side, rows a record apart
// (serve's layout), gives each row exactly the bytes of the row-major Apply, and leaves
// the bytes between tensors and rows alone. Covered: stacked floats and ints with nulls,
// dtypes written by the fast and the general path, padded lists (values and lengths),
// with and without a row selection, over blocks of rows and chunk boundaries.
func TestApplyToRecords(t *testing.T) {
	const rows = 2500 // more than one block of values (blockValues) and of padded rows
	vals := func(k int) []any {
		v := make([]any, rows)
		for i := range v {
			switch {
			case (i+k)%7 == 0:
				v[i] = nil
			default:
				v[i] = float64((i*31+k*17)%200) - 100.5
			}
		}
		return v
	}
	ivals := func(k int) []any {
		v := make([]any, rows)
		for i := range v {
			if (i+k)%5 != 0 {
				v[i] = (i*13 + k) % 300
			}
		}
		return v
	}
	lists := make([]any, rows)
	for i := range lists {
		if i%11 != 0 {
			l := make([]any, i%6)
			for k := range l {
				l[k] = float64(i + k)
			}
			lists[i] = l
		}
	}
	fa, fb := mk("fa", f32t, vals(0)[:1000], vals(0)[1000:]), mk("fb", f32t, vals(1))
	ia, ib := mk("ia", i64t, ivals(0)), mk("ib", i64t, ivals(1)[:7], ivals(1)[7:])
	lc := mk("lc", arrow.ListOf(f32t), lists[:1300], lists[1300:])
	norm := config.Transform{Op: config.OpNormalize, Mean: []float64{0.5}, Std: []float64{3}}
	pad := config.Transform{Op: config.OpPad, Length: 4, PadValue: -1}
	cases := []struct {
		name string
		o    config.Output
		cols []col
	}{
		{"stacked float32", config.Output{Transforms: []config.Transform{fillNum(0), norm}}, []col{fa, fb}},
		{"stacked float64", config.Output{DType: "float64"}, []col{fa, fb}},
		{"stacked float16", config.Output{DType: "float16"}, []col{fa, fb}},
		{"stacked int64", config.Output{}, []col{ia, ib}},
		{"stacked int8", config.Output{DType: "int8"}, []col{ia, ib}},
		{"stacked int32", config.Output{DType: "int32"}, []col{ia, ib}},
		{"padded list", config.Output{Transforms: []config.Transform{pad}}, []col{lc}},
		{"padded list, float16", config.Output{DType: "float16", Transforms: []config.Transform{pad}}, []col{lc}},
	}
	everyThird := make([]int32, 0, rows/3)
	for r := 0; r < rows; r += 3 {
		everyThird = append(everyThird, int32(r))
	}
	for _, tc := range cases {
		for _, sel := range [][]int32{nil, everyThird} {
			t.Run(fmt.Sprintf("%s, %d selected", tc.name, len(sel)), func(t *testing.T) {
				tc.o.Name = "out"
				out, want := run(t, tc.o, sel, tc.cols...)
				n := rows
				if sel != nil {
					n = len(sel)
				}
				// Records: each tensor 8-byte aligned, then 24 bytes of filler.
				offs, stride := make([]int, len(want)), 0
				for i := range want {
					offs[i] = stride
					stride += (out.rowBytes(i) + 7) &^ 7
				}
				stride += 24
				rec := bytes.Repeat([]byte{0xAB}, n*stride)
				d := Dest{Bufs: make([][]byte, len(want)), Stride: make([]int, len(want))}
				for i := range want {
					d.Bufs[i], d.Stride[i] = rec[offs[i]:], stride
				}
				_, cs := fieldsOf(tc.cols)
				if err := out.ApplyTo(cs, sel, d); err != nil {
					t.Fatal(err)
				}
				touched := make([]bool, stride)
				for i := range want {
					for b := range out.rowBytes(i) {
						touched[offs[i]+b] = true
					}
				}
				for r := range n {
					for i := range want {
						rb := out.rowBytes(i)
						got := rec[r*stride+offs[i] : r*stride+offs[i]+rb]
						if w := want[i][r*rb : (r+1)*rb]; !bytes.Equal(got, w) {
							t.Fatalf("row %d tensor %d: %x, row-major Apply wrote %x", r, i, got, w)
						}
					}
					for b, on := range touched {
						if !on && rec[r*stride+b] != 0xAB {
							t.Fatalf("row %d: byte %d of the record, outside every tensor, was written", r, b)
						}
					}
				}
			})
		}
	}
}

func TestApplyToRejectsOverlappingRows(t *testing.T) {
	a := mk("a", f32t, []any{1.0, 2.0})
	out, _ := run(t, config.Output{Name: "o"}, nil, a, a)
	_, cs := fieldsOf([]col{a, a})
	err := out.ApplyTo(cs, nil, Dest{Bufs: [][]byte{make([]byte, 64)}, Stride: []int{4}})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("rows 4 bytes apart, but a row is 8 bytes")) {
		t.Fatalf("ApplyTo with rows closer than a row: %v", err)
	}
}
