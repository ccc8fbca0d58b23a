package pages

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Every row of FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY columns in
// BYTE_STREAM_SPLIT decodes to what arrow-go reads, bit for bit: NaNs with payloads, the
// infinities, -0 and subnormals among random values.
func TestByteStreamSplitFiles(t *testing.T) {
	f32s := []float32{float32(math.NaN()), math.Float32frombits(0xffc00001), float32(math.Inf(1)),
		float32(math.Inf(-1)), float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, 1.5}
	f64s := []float64{math.NaN(), math.Float64frombits(0xfff8000000000001), math.Inf(1), math.Inf(-1),
		math.Copysign(0, -1), math.SmallestNonzeroFloat64, math.MaxFloat64, -2.25}
	encVariants(t, func(t *testing.T, v2, nulls bool, codec compress.Compression) {
		for _, n := range []int{1, 129, 3000} {
			rng := rand.New(rand.NewPCG(6, uint64(n)))
			mem := memory.DefaultAllocator
			fixed := func(w int) arrow.Array {
				return encBuild(array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: w}), n, nulls, func(int) []byte {
					b := make([]byte, w)
					for i := range b {
						b[i] = byte(rng.Uint32())
					}
					return b
				})
			}
			cols := []arrow.Array{
				encBuild(array.NewFloat32Builder(mem), n, nulls, func(i int) float32 {
					if i%5 == 0 {
						return f32s[i/5%len(f32s)]
					}
					return math.Float32frombits(rng.Uint32())
				}),
				encBuild(array.NewFloat64Builder(mem), n, nulls, func(i int) float64 {
					if i%5 == 0 {
						return f64s[i/5%len(f64s)]
					}
					return rng.NormFloat64()
				}),
				encBuild(array.NewInt32Builder(mem), n, nulls, func(int) int32 { return int32(rng.Uint32()) }),
				encBuild(array.NewInt64Builder(mem), n, nulls, func(i int) int64 {
					return []int64{math.MinInt64, math.MaxInt64, int64(rng.Uint64())}[i%3]
				}),
				fixed(1), fixed(3), fixed(16),
			}
			f := encFile{enc: parquet.Encodings.ByteStreamSplit, v2: v2, codec: codec, rgRows: 1000, cols: cols}
			f.check(t, nil)
		}
	})
}

// Values of every width gather from their streams whatever the reads' sizes, and
// FIXED_LEN_BYTE_ARRAY views stay valid until the page ends.
func TestByteStreamSplitWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		typ physical
		w   int
	}{{tInt32, 4}, {tFloat, 4}, {tInt64, 8}, {tDouble, 8}, {tFixed, 1}, {tFixed, 5}, {tFixed, 12}} {
		for _, n := range []int{0, 1, 2, 129, 1500} {
			plain := make([]byte, n*c.w)
			for i := range plain {
				plain[i] = byte(rng.Uint32())
			}
			var r bssReader
			if err := r.reset(encSplit(plain, c.w), c.typ, c.w, n); err != nil {
				t.Fatal(err)
			}
			var got []byte
			var views [][]byte
			var v Values
			for run := 0; len(got) < len(plain); run++ {
				m := min(encRuns[run%len(encRuns)], n-len(got)/c.w)
				v.grow(c.typ, m)
				if err := r.read(nil, &v, m); err != nil {
					t.Fatal(err)
				}
				switch c.typ {
				case tInt32:
					got = append(got, asBytes(v.I32[:m])...)
				case tFloat:
					got = append(got, asBytes(v.F32[:m])...)
				case tInt64:
					got = append(got, asBytes(v.I64[:m])...)
				case tDouble:
					got = append(got, asBytes(v.F64[:m])...)
				case tFixed:
					for _, b := range v.Bin[:m] {
						if len(b) != c.w || cap(b) != c.w {
							t.Fatalf("a view of %d bytes (cap %d), width %d", len(b), cap(b), c.w)
						}
						got = append(got, b...)
					}
					views = append(views, v.Bin[:m]...)
				}
			}
			if err := r.finish(); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(plain) {
				t.Fatalf("type %d, width %d, %d values: decoded bytes differ", c.typ, c.w, n)
			}
			for i, b := range views {
				if string(b) != string(plain[i*c.w:(i+1)*c.w]) {
					t.Fatalf("width %d: the view of value %d changed by the page's end", c.w, i)
				}
			}
		}
	}
}

func TestByteStreamSplitCorrupt(t *testing.T) {
	var r bssReader
	encErr(t, r.reset(make([]byte, 7), tFloat, 0, 10), "BYTE_STREAM_SPLIT: a 7-byte values section is not a whole number of 4-byte values")
	encErr(t, r.reset(make([]byte, 20), tFixed, 3, 10), "a 20-byte values section is not a whole number of 3-byte values")
	encErr(t, r.reset(make([]byte, 88), tDouble, 0, 10), "BYTE_STREAM_SPLIT: 11 values in a page of 10")
	if err := r.reset(make([]byte, 16), tInt64, 0, 10); err != nil {
		t.Fatal(err)
	}
	v := Values{I64: make([]int64, 3)}
	encErr(t, r.read(nil, &v, 3), "BYTE_STREAM_SPLIT: 3 values wanted, 2 of the page's 2 left")
	if err := r.read(nil, &v, 1); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.finish(), "BYTE_STREAM_SPLIT: the page's rows take 1 of its 2 values")
}

// BenchmarkByteStreamSplit gathers a page of doubles.
func BenchmarkByteStreamSplit(b *testing.B) {
	n := 1 << 16
	if testing.Short() {
		n = 1 << 12
	}
	sec := make([]byte, 8*n)
	for i := range sec {
		sec[i] = byte(i * 7)
	}
	var r bssReader
	v := Values{F64: make([]float64, 1024)}
	b.SetBytes(int64(len(sec)))
	for b.Loop() {
		if err := r.reset(sec, tDouble, 0, n); err != nil {
			b.Fatal(err)
		}
		for left := n; left > 0; left -= min(left, 1024) {
			if err := r.read(nil, &v, min(left, 1024)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
}
