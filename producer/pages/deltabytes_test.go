package pages

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// encStrings are BYTE_ARRAY columns of n rows: random, all empty, sorted with long shared
// prefixes, all equal and long, binary, and (last) all of 6 bytes.
func encStrings(n int, nulls bool) []arrow.Array {
	rng := rand.New(rand.NewPCG(4, uint64(n)))
	mem := memory.DefaultAllocator
	str := func(val func(i int) string) arrow.Array { return encBuild(array.NewStringBuilder(mem), n, nulls, val) }
	long := strings.Repeat("long value ", 30)
	return []arrow.Array{
		str(func(int) string {
			b := make([]byte, rng.IntN(20))
			for i := range b {
				b[i] = 'a' + byte(rng.IntN(3))
			}
			return string(b)
		}),
		str(func(int) string { return "" }),
		str(func(i int) string { return fmt.Sprintf("https://example.com/items/%08d/x", i*7/3) }),
		str(func(int) string { return long }),
		encBuild(array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary), n, nulls, func(i int) []byte {
			b := make([]byte, rng.IntN(4)*i%50)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return b
		}),
		str(func(i int) string { return fmt.Sprintf("%06d", i/5*5) }),
	}
}

// Every row of BYTE_ARRAY columns in DELTA_LENGTH_BYTE_ARRAY decodes to what arrow-go
// reads.
func TestDeltaLengthByteArrayFiles(t *testing.T) {
	encVariants(t, func(t *testing.T, v2, nulls bool, codec compress.Compression) {
		for _, n := range []int{1, 129, 3000} {
			f := encFile{enc: parquet.Encodings.DeltaLengthByteArray, v2: v2, codec: codec, rgRows: 1000, cols: encStrings(n, nulls)}
			f.check(t, nil)
		}
	})
}

// Every row of BYTE_ARRAY columns in DELTA_BYTE_ARRAY decodes to what arrow-go reads; the
// column of 6-byte values, decoded as FIXED_LEN_BYTE_ARRAY(6) too, gives the same bytes
// (arrow-go writes no FIXED_LEN_BYTE_ARRAY in DELTA_BYTE_ARRAY).
func TestDeltaByteArrayFiles(t *testing.T) {
	encVariants(t, func(t *testing.T, v2, nulls bool, codec compress.Compression) {
		for _, n := range []int{1, 129, 3000} {
			cols := encStrings(n, nulls)
			f := encFile{enc: parquet.Encodings.DeltaByteArray, v2: v2, codec: codec, rgRows: 1000, cols: cols}
			f.check(t, nil)
			f.check(t, map[int]int{len(cols) - 1: 6})
		}
	})
}

// A value of DELTA_BYTE_ARRAY whose length is not a FIXED_LEN_BYTE_ARRAY's width is
// refused when the page starts.
func TestDeltaByteArrayWidth(t *testing.T) {
	b := encDeltaBytes([][]byte{[]byte("abcdef"), []byte("abcxyz"), []byte("abc"), []byte("abcdef")})
	var r deltaByteArrayReader
	encErr(t, r.reset(b, 6, 4), "DELTA_BYTE_ARRAY: value 2 has 3 bytes in a column of width 6")
	if err := r.reset(b, 0, 4); err != nil {
		t.Fatalf("as BYTE_ARRAY: %v", err)
	}
}

// Views handed out by any read of a page stay valid, and unchanged, until the page ends,
// however the reads are cut; a value without a suffix shares the bytes of the one before.
func TestDeltaByteArrayViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var vals [][]byte
	for i := range 3000 {
		switch {
		case i%10 == 3 && i > 0:
			vals = append(vals, vals[i-1]) // no suffix: a view of the value before
		case i%10 == 4:
			vals = append(vals, vals[i-1][:len(vals[i-1])/2])
		default:
			v := fmt.Appendf(nil, "prefix-%d-", i/100)
			for range rng.IntN(30) {
				v = append(v, byte(rng.Uint32()))
			}
			vals = append(vals, v)
		}
	}
	enc := encDeltaBytes(vals)
	var r deltaByteArrayReader
	if err := r.reset(enc, 0, len(vals)); err != nil {
		t.Fatal(err)
	}
	var v Values
	var got [][]byte
	for run := 0; len(got) < len(vals); run++ {
		n := min(encRuns[run%len(encRuns)], len(vals)-len(got))
		v.grow(tByteArray, n)
		if err := r.read(nil, &v, n); err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Bin[:n]...)
	}
	if err := r.finish(); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if !bytes.Equal(got[i], vals[i]) || cap(got[i]) != len(got[i]) {
			t.Fatalf("value %d: %q (cap %d), want %q", i, got[i], cap(got[i]), vals[i])
		}
	}
	if unsafe.SliceData(got[3]) != unsafe.SliceData(got[2]) {
		t.Errorf("a value without a suffix was copied")
	}
}

// prefixes builds DELTA_BYTE_ARRAY sections from prefix lengths and suffixes as given,
// however wrong.
func prefixes(pre []int64, sufLens []int64, data string) []byte {
	b := encDeltaInts(pre, deltaOpts{w32: true})
	b = append(b, encDeltaInts(sufLens, deltaOpts{w32: true})...)
	return append(b, data...)
}

func TestDeltaLengthByteArrayCorrupt(t *testing.T) {
	lengths := func(lens []int64, data string) []byte {
		return append(encDeltaInts(lens, deltaOpts{w32: true}), data...)
	}
	v := Values{Bin: make([][]byte, 4)}
	var r deltaLengthReader
	encErr(t, r.reset([]byte{0x80, 0x01, 4}, 4), "DELTA_LENGTH_BYTE_ARRAY lengths: DELTA_BINARY_PACKED: value count at byte 3 is cut short")
	encErr(t, r.reset(lengths([]int64{1, 2}, "abc"), 1), "DELTA_LENGTH_BYTE_ARRAY lengths: DELTA_BINARY_PACKED: 2 values in a page of 1")

	for _, c := range []struct {
		lens []int64
		data string
		want string
	}{
		{[]int64{2, -1}, "abc", "value 1 has length -1"},
		{[]int64{2, 5}, "abcd", "value 1 of 5 bytes, 2 left in the page"},
		{[]int64{-1 << 31, 1}, "ab", "value 0 has length -2147483648"},
	} {
		if err := r.reset(lengths(c.lens, c.data), 4); err != nil {
			t.Fatal(err)
		}
		encErr(t, r.read(nil, &v, 2), c.want)
	}
	if err := r.reset(lengths([]int64{1, 1}, "abc"), 4); err != nil {
		t.Fatal(err)
	}
	if err := r.read(nil, &v, 2); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.finish(), "DELTA_LENGTH_BYTE_ARRAY: 1 bytes follow the last value")
	if err := r.reset(lengths([]int64{1, 1}, "ab"), 4); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.finish(), "DELTA_LENGTH_BYTE_ARRAY: the page's rows take 0 of the header's 2 values")
}

func TestDeltaByteArrayCorrupt(t *testing.T) {
	// A value of 64 KiB, then values that each repeat it with one more byte: a page of
	// about 150 KB that describes about 2.6 GB.
	bombPre, bombSuf := []int64{0}, []int64{1 << 16}
	for range 40000 {
		bombPre, bombSuf = append(bombPre, 1<<16), append(bombSuf, 1)
	}
	bomb := prefixes(bombPre, bombSuf, strings.Repeat("x", 1<<16+40000))
	cases := []struct {
		name    string
		b       []byte
		typeLen int
		want    string
	}{
		{"prefix cut short", []byte{0x80, 0x01, 4, 2}, 0, "DELTA_BYTE_ARRAY prefix lengths: DELTA_BINARY_PACKED: first value at byte 4 is cut short"},
		{"suffixes cut short", append(encDeltaInts([]int64{0, 1}, deltaOpts{w32: true}), 0x80), 0, "DELTA_BYTE_ARRAY suffixes: DELTA_LENGTH_BYTE_ARRAY lengths: DELTA_BINARY_PACKED: block size at byte 0 is cut short"},
		{"counts differ", prefixes([]int64{0, 1}, []int64{1, 1, 1}, "abc"), 0, "DELTA_BYTE_ARRAY: 2 prefix lengths but 3 suffixes"},
		{"first prefix", prefixes([]int64{1, 1}, []int64{1, 1}, "ab"), 0, "value 0 has a prefix of 1 bytes, the value before 0 bytes"},
		{"prefix too long", prefixes([]int64{0, 3}, []int64{2, 1}, "abc"), 0, "value 1 has a prefix of 3 bytes, the value before 2 bytes"},
		{"negative prefix", prefixes([]int64{0, -1}, []int64{2, 1}, "abc"), 0, "value 1 has a prefix of -1 bytes"},
		{"negative suffix", prefixes([]int64{0, 0}, []int64{2, -1}, "abc"), 0, "value 1 has a suffix of -1 bytes"},
		{"suffix past the page", prefixes([]int64{0, 0}, []int64{2, 4}, "abcd"), 0, "value 1 has a suffix of 4 bytes, 2 left in the page"},
		{"bytes after the suffixes", prefixes([]int64{0, 0}, []int64{2, 1}, "abcd"), 0, "DELTA_BYTE_ARRAY: 1 bytes follow the last suffix"},
		{"fixed width", prefixes([]int64{0, 1}, []int64{2, 2}, "abcd"), 2, "value 1 has 3 bytes in a column of width 2"},
		{"expands too far", bomb, 0, "unsupported: DELTA_BYTE_ARRAY page expands to over 2147483648 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r deltaByteArrayReader
			encErr(t, r.reset(c.b, c.typeLen, 1<<20), c.want)
		})
	}
	var r deltaByteArrayReader
	if err := r.reset(prefixes([]int64{0, 1}, []int64{2, 0}, "ab"), 0, 4); err != nil {
		t.Fatal(err)
	}
	encErr(t, r.finish(), "DELTA_BYTE_ARRAY: the page's rows take 0 of the header's 2 values")
}

// FuzzDeltaByteArray: no section makes DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY
// panic or read out of bounds. A section DELTA_BYTE_ARRAY's reset accepts reads in full,
// each read filling exactly the values asked for, with every view cap == len and of the
// column's width; DELTA_LENGTH_BYTE_ARRAY's views lie within the section.
func FuzzDeltaByteArray(f *testing.F) {
	f.Add(encDeltaLength([][]byte{[]byte("ab"), nil, []byte("cde")}), uint8(0), uint16(1))
	f.Add(encDeltaBytes([][]byte{[]byte("abc"), []byte("abd"), []byte("abd"), []byte("xyz")}), uint8(3), uint16(2))
	f.Fuzz(func(t *testing.T, b []byte, width uint8, run uint16) {
		step := int(run%1024) + 1
		const most = 1 << 16
		out := make([][]byte, step+1)
		sentinel := []byte("sentinel")

		var l deltaLengthReader
		if l.reset(b, most) == nil {
			for l.lens.left > 0 {
				n := min(step, l.lens.left)
				out[n] = sentinel
				if l.next(out[:n]) != nil {
					break
				}
				for _, v := range out[:n] {
					if cap(v) != len(v) || len(v) > 0 && !within(v, b) {
						t.Fatalf("a view of %d bytes (cap %d) outside the section", len(v), cap(v))
					}
				}
				if unsafe.SliceData(out[n]) != unsafe.SliceData(sentinel) {
					t.Fatalf("a read of %d values wrote past them", n)
				}
			}
		}

		var r deltaByteArrayReader
		typeLen := int(width % 8)
		if r.reset(b, typeLen, most) != nil {
			return
		}
		v := Values{Bin: out}
		for r.prefix.left > 0 {
			n := min(step, r.prefix.left)
			out[n] = sentinel
			if err := r.read(nil, &v, n); err != nil {
				t.Fatalf("reset accepted the section, a read fails: %v", err)
			}
			for _, x := range out[:n] {
				if cap(x) != len(x) || typeLen > 0 && len(x) != typeLen {
					t.Fatalf("a value of %d bytes (cap %d) in a column of width %d", len(x), cap(x), typeLen)
				}
			}
			if unsafe.SliceData(out[n]) != unsafe.SliceData(sentinel) {
				t.Fatalf("a read of %d values wrote past them", n)
			}
		}
		if err := r.finish(); err != nil {
			t.Fatalf("every value read, finish says %v", err)
		}
	})
}

// within says whether v lies inside b.
func within(v, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo, at := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&v[0]))
	return at >= lo && at+uintptr(len(v)) <= lo+uintptr(len(b))
}

// BenchmarkDeltaByteArray decodes a page of sorted strings with shared prefixes.
func BenchmarkDeltaByteArray(b *testing.B) {
	n := 1 << 14
	if testing.Short() {
		n = 1 << 10
	}
	vals := make([][]byte, n)
	size := 0
	for i := range vals {
		vals[i] = binary.BigEndian.AppendUint64([]byte("https://example.com/items/"), uint64(i*3))
		size += len(vals[i])
	}
	enc := encDeltaBytes(vals)
	var r deltaByteArrayReader
	var v Values
	v.grow(tByteArray, 1024)
	b.SetBytes(int64(size))
	for b.Loop() {
		if err := r.reset(enc, 0, n); err != nil {
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
