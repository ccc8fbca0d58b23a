package pages

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Every row of INT32 and INT64 columns in DELTA_BINARY_PACKED, as arrow-go writes them,
// decodes to what arrow-go reads: random, constant (bit width 0), extreme values whose
// deltas wrap, slowly growing ones; one row, 129 rows, several row groups of pages.
func TestDeltaBinaryPackedFiles(t *testing.T) {
	encVariants(t, func(t *testing.T, v2, nulls bool, codec compress.Compression) {
		for _, n := range []int{1, 129, 3000} {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			mem := memory.DefaultAllocator
			i32 := func(val func(i int) int32) arrow.Array { return encBuild(array.NewInt32Builder(mem), n, nulls, val) }
			i64 := func(val func(i int) int64) arrow.Array { return encBuild(array.NewInt64Builder(mem), n, nulls, val) }
			ext32 := []int32{math.MinInt32, math.MaxInt32, 0, -1, math.MaxInt32, math.MinInt32}
			ext64 := []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MaxInt64, math.MinInt64}
			cols := []arrow.Array{
				i32(func(int) int32 { return int32(rng.Uint32()) }),
				i32(func(int) int32 { return -7 }),
				i32(func(i int) int32 { return ext32[i%len(ext32)] }),
				i32(func(i int) int32 { return int32(3*i + rng.IntN(5)) }),
				i64(func(int) int64 { return int64(rng.Uint64()) }),
				i64(func(int) int64 { return math.MaxInt64 }),
				i64(func(i int) int64 { return ext64[i%len(ext64)] }),
				i64(func(i int) int64 { return 1<<40 - int64(i)<<20 + rng.Int64N(1000) }),
				i64(func(i int) int64 { return int64(rng.Uint64() >> (i % 64)) }), // every width
			}
			if nulls {
				cols = append(cols, encNulls(array.NewInt64Builder(mem), n))
			}
			f := encFile{enc: parquet.Encodings.DeltaBinaryPacked, v2: v2, codec: codec, rgRows: 1000, cols: cols}
			f.check(t, nil)
		}
	})
}

// Streams of every shape the spec allows, not only arrow-go's 128 values in 4
// miniblocks: bigger blocks and miniblocks, widths up to 64, junk widths for the last
// block's miniblocks without values (as parquet-mr leaves them).
func TestDeltaBinaryPackedShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	shapes := []deltaOpts{{block: 128, minis: 4}, {block: 128, minis: 1}, {block: 256, minis: 8},
		{block: 512, minis: 4, unused: 0xff}, {block: 1024, minis: 32, unused: 200}}
	for _, o := range shapes {
		for _, n := range []int{0, 1, 2, 33, 129, 1000, 1025, 4097} {
			for _, w32 := range []bool{false, true} {
				vals := make([]int64, n)
				for i := range vals {
					vals[i] = int64(rng.Uint64() >> rng.IntN(64))
					if w32 {
						vals[i] = int64(int32(vals[i]))
					}
				}
				o.w32 = w32
				b := encDeltaInts(vals, o)
				var r deltaInts
				end, err := r.reset(b, w32, n)
				if err != nil || end != len(b) {
					t.Fatalf("%+v, %d values: reset: end %d of %d, %v", o, n, end, len(b), err)
				}
				got := make([]int64, 0, n)
				for run := 0; len(got) < n; run++ {
					m := min(encRuns[run%len(encRuns)], n-len(got))
					var err error
					if w32 { // an INT32 stream wraps in 32 bits: its values are the low halves
						buf := make([]int32, m)
						err = deltaRead(&r, buf)
						for _, x := range buf {
							got = append(got, int64(x))
						}
					} else {
						buf := make([]int64, m)
						err = deltaRead(&r, buf)
						got = append(got, buf...)
					}
					if err != nil {
						t.Fatalf("%+v, %d values: %v", o, n, err)
					}
				}
				for i := range vals {
					if got[i] != vals[i] {
						t.Fatalf("%+v, %d values: value %d is %d, want %d", o, n, i, got[i], vals[i])
					}
				}
				if err := deltaRead(&r, make([]int64, 1)); err == nil {
					t.Fatalf("%+v, %d values: a value read past the header's count", o, n)
				}
			}
		}
	}
}

// Every truncation of a valid stream is refused when the page starts, not read past.
func TestDeltaBinaryPackedTruncated(t *testing.T) {
	vals := make([]int64, 300)
	for i := range vals {
		vals[i] = int64(i * i * 1000)
	}
	b := encDeltaInts(vals, deltaOpts{block: 256, minis: 2})
	for cut := 1; cut < len(b); cut++ {
		var r deltaIntReader
		err := r.reset(b[:cut:cut], tInt64, len(vals))
		encErr(t, err, "DELTA_BINARY_PACKED: ")
	}
}

func TestDeltaBinaryPackedCorrupt(t *testing.T) {
	// hdr is a header: block size, miniblocks, value count, first value.
	hdr := func(block, minis, count uint64, first int64) []byte {
		b := binary.AppendUvarint(nil, block)
		b = binary.AppendUvarint(b, minis)
		b = binary.AppendUvarint(b, count)
		return binary.AppendVarint(b, first)
	}
	// blk appends a block: min delta, widths, then bytes bytes of miniblocks.
	blk := func(b []byte, minDelta int64, widths []byte, bytes int) []byte {
		b = binary.AppendVarint(b, minDelta)
		b = append(b, widths...)
		return append(b, make([]byte, bytes)...)
	}
	cases := []struct {
		name string
		b    []byte
		typ  physical
		most int
		want string
	}{
		{"block size cut short", []byte{0x80}, tInt64, 10, "block size at byte 0 is cut short"},
		{"miniblocks cut short", []byte{0x80, 0x01}, tInt64, 10, "miniblock count at byte 2 is cut short"},
		{"count cut short", []byte{0x80, 0x01, 4}, tInt64, 10, "value count at byte 3 is cut short"},
		{"first value cut short", []byte{0x80, 0x01, 4, 2, 0xff}, tInt64, 10, "first value at byte 4 is cut short"},
		{"varint over 64 bits", append([]byte{0x80, 0x01, 4, 2}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), tInt64, 10, "first value at byte 4 overflows 64 bits"},
		{"block size 0", hdr(0, 4, 1, 0), tInt64, 10, "0 values per block, not a positive multiple of 128"},
		{"block size 100", hdr(100, 4, 1, 0), tInt64, 10, "100 values per block"},
		{"block size over 32 bits", hdr(1<<33, 4, 1, 0), tInt64, 10, "blocks of 8589934592 values, over 2^32"},
		{"no miniblocks", hdr(128, 0, 1, 0), tInt64, 10, "0 miniblocks in a block of 128 values"},
		{"miniblocks of 16", hdr(128, 8, 1, 0), tInt64, 10, "8 miniblocks in a block of 128 values"},
		{"miniblocks not dividing", hdr(1152, 35, 1, 0), tInt64, 10, "35 miniblocks in a block of 1152 values"},
		{"count over the page", hdr(128, 4, 11, 0), tInt64, 10, "11 values in a page of 10"},
		{"first value over int32", hdr(128, 4, 1, 1<<31), tInt32, 10, "first value 2147483648 is out of int32 range"},
		{"min delta over int32", blk(hdr(128, 4, 2, 0), -1<<31-1, []byte{0, 0, 0, 0}, 0), tInt32, 10, "min delta -2147483649 of the block at byte 5 is out of int32 range"},
		{"widths cut short", blk(hdr(128, 4, 2, 0), 0, []byte{0, 0}, 0), tInt64, 10, "the 4 bit widths of the block at byte 5 are cut short"},
		{"block header missing", hdr(128, 4, 2, 0), tInt64, 10, "min delta at byte 5 is cut short"},
		{"width 33 for INT32", blk(hdr(128, 4, 2, 0), 0, []byte{33, 0, 0, 0}, 132), tInt32, 10, "bit width 33, over 32"},
		{"width 65 for INT64", blk(hdr(128, 4, 2, 0), 0, []byte{65, 0, 0, 0}, 260), tInt64, 10, "bit width 65, over 64"},
		{"miniblock cut short", blk(hdr(128, 4, 2, 0), 0, []byte{8, 0, 0, 0}, 31), tInt64, 10, "miniblock of 32 bytes at byte 10 runs past the stream's end (41 bytes)"},
		{"second block missing", blk(hdr(128, 4, 130, 0), 0, []byte{1, 1, 1, 1}, 16), tInt64, 200, "min delta at byte 27 is cut short"},
		{"bytes after the values", blk(hdr(128, 4, 2, 0), 0, []byte{0, 0, 0, 0}, 1), tInt64, 10, "values end at byte 10 of a 11-byte values section"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r deltaIntReader
			encErr(t, r.reset(c.b, c.typ, c.most), c.want)
		})
	}
	// Widths of the last block's miniblocks without values are not checked.
	var r deltaIntReader
	if err := r.reset(blk(hdr(128, 4, 2, 0), 0, []byte{0, 200, 65, 255}, 0), tInt32, 10); err != nil {
		t.Fatalf("junk widths of unused miniblocks: %v", err)
	}
	// Rows must take the header's values exactly.
	v := Values{I64: make([]int64, 3)}
	if err := r.reset(blk(hdr(128, 4, 2, 0), 0, []byte{0, 0, 0, 0}, 0), tInt64, 10); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.read(nil, &v, 3), "3 values wanted, 2 of the header's 2 left")
	if err := r.read(nil, &v, 1); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.finish(), "the page's rows take 1 of the header's 2 values")
}

// A stream of no values may be empty: a page whose rows are all null.
func TestDeltaBinaryPackedEmpty(t *testing.T) {
	var r deltaIntReader
	if err := r.reset(nil, tInt64, 5); err != nil {
		t.Fatal(err)
	}
	v := Values{I64: make([]int64, 1)}
	if err := r.read(nil, &v, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.finish(); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.read(nil, &v, 1), "1 values wanted, 0 of the header's 0 left")
}

// FuzzDeltaBinaryPacked: no stream makes the reader panic or read out of bounds; one
// that reset accepts reads in full, every read filling exactly the values asked for.
func FuzzDeltaBinaryPacked(f *testing.F) {
	f.Add(encDeltaInts([]int64{1, 2, 3, -5, 1 << 40}, deltaOpts{}), false, uint16(2))
	f.Add(encDeltaInts([]int64{math.MinInt32, math.MaxInt32, 0}, deltaOpts{w32: true, block: 256, minis: 8, unused: 99}), true, uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, w32 bool, run uint16) {
		var r deltaInts
		end, err := r.reset(b, w32, 1<<16)
		if err != nil {
			return
		}
		if end > len(b) {
			t.Fatalf("stream ends at %d of %d bytes", end, len(b))
		}
		step := int(run%1024) + 1
		const sentinel = 0x5a5a5a5a
		buf := make([]int64, step+1)
		buf32 := make([]int32, step+1)
		for r.left > 0 {
			n := min(step, r.left)
			buf[n], buf32[n] = sentinel, sentinel
			if w32 {
				err = deltaRead(&r, buf32[:n])
			} else {
				err = deltaRead(&r, buf[:n])
			}
			if err != nil {
				t.Fatalf("reset accepted the stream, a read fails: %v", err)
			}
			if buf[n] != sentinel || buf32[n] != sentinel {
				t.Fatalf("a read of %d values wrote past them", n)
			}
		}
		if deltaRead(&r, buf[:1]) == nil {
			t.Fatalf("a read past the header's %d values succeeded", r.total)
		}
	})
}

// BenchmarkDeltaBinaryPacked decodes INT64 streams whose miniblocks have the given bit
// width.
func BenchmarkDeltaBinaryPacked(b *testing.B) {
	n := 1 << 16
	if testing.Short() {
		n = 1 << 12
	}
	for _, w := range []int{0, 8, 20, 40, 64} {
		vals := make([]int64, n)
		rng := rand.New(rand.NewPCG(3, 3))
		for i := 1; i < n; i++ {
			if w > 0 {
				vals[i] = vals[i-1] + int64(rng.Uint64()>>(64-w))
			}
		}
		enc := encDeltaInts(vals, deltaOpts{})
		out := make([]int64, 1024)
		b.Run(fmt.Sprintf("width=%d", w), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			var r deltaInts
			for b.Loop() {
				if _, err := r.reset(enc, false, n); err != nil {
					b.Fatal(err)
				}
				for r.left > 0 {
					if err := deltaRead(&r, out[:min(len(out), r.left)]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
