package pages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// Fuzz targets for the three parsers of bytes a file's writer made: the decoder as a
// whole, the RLE / bit-packed hybrid, and page headers. Their seed corpora in
// testdata/fuzz/ are real chunks, level and index sections and headers of arrow-go's
// writer; TestWriteFuzzSeeds rewrites them when SHMLOADER_WRITE_FUZZ_SEEDS=1.

// maxFuzzValues bounds the footer's count a FuzzDecoder input may claim, so that every
// input decodes in little time.
const maxFuzzValues = 1 << 14

// FuzzDecoder decodes arbitrary chunk bytes as a column of any physical type, max
// definition level and codec, in runs: no input may panic, hang, or yield more rows than
// asked or than the footer's count; every run must be well formed; every failure must
// be an *Error wrapping ErrCorrupt or ErrUnsupported.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{}, uint8(1), uint8(0), uint8(0), uint8(0), uint16(0), uint16(1), false)
	f.Fuzz(func(t *testing.T, data []byte, typ, typeLen, maxDef, codec uint8, values, run uint16, indices bool) {
		c := Chunk{Type: parquet.Type(typ % 8), TypeLen: int(typeLen), MaxDef: int16(maxDef % 4),
			Codec: compress.Compression(codec % 8), Values: int64(values % maxFuzzValues),
			Uncompressed: 1 << 24, Data: data} // the footer's bound keeps every page's buffer small
		d := Decoder{Indices: indices}
		if err := d.Reset(c); err != nil {
			checkErr(t, err)
			return
		}
		typP, _ := physicalOf(c.Type)
		var v Values
		served := int64(0)
		for i := 0; served < c.Values; i++ {
			want := []int{int(run%300) + 1, 1, int(run) + 1}[i%3]
			n, err := d.Read(want, &v)
			if err != nil {
				checkErr(t, err)
				return
			}
			if n < 1 || n > want || served+int64(n) > c.Values || v.N != n {
				t.Fatalf("Read(%d) after %d of %d rows gave %d (N %d)", want, served, c.Values, n, v.N)
			}
			dict, _ := d.Dictionary()
			nulls := false
			for k := range n {
				valueAt(t, typP, &v, k, dict)
				nulls = nulls || v.Null[k] == 1
			}
			if nulls != v.HasNull {
				t.Fatalf("HasNull %v, nulls present %v", v.HasNull, nulls)
			}
			served += int64(n)
		}
		if err := d.Finish(); err != nil {
			checkErr(t, err)
		}
	})
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%v (%T): want an *Error wrapping ErrCorrupt or ErrUnsupported", err, err)
	}
}

// FuzzHybrid reads arbitrary bytes as the RLE / bit-packed hybrid at any width, in runs,
// and checks every value and every failure against refHybrid, a plain reading of the
// format: the same values, a failure exactly when a value the read needs is malformed.
func FuzzHybrid(f *testing.F) {
	f.Add([]byte{0x03, 0x88}, uint8(1), uint32(2), uint16(8), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, width uint8, max uint32, n uint16, run uint8) {
		w := uint(width % 33)
		want, failAt := refHybrid(b, w, max, int(n))
		var h hybrid
		h.reset(b, w, max)
		got := make([]uint32, n)
		for k, i := 0, 0; k < int(n); i++ {
			m := min(int(n)-k, []int{int(run%64) + 1, 1, int(run) + 1}[i%3])
			err := h.read(got[k : k+m])
			switch {
			case err != nil && !errors.Is(err, ErrCorrupt):
				t.Fatalf("read of values %d..%d: %v, want ErrCorrupt", k, k+m-1, err)
			case err != nil && (failAt < k || failAt >= k+m):
				t.Fatalf("read of values %d..%d failed (%v); the format fails at value %d", k, k+m-1, err, failAt)
			case err != nil:
				return
			case failAt >= k && failAt < k+m:
				t.Fatalf("read of values %d..%d succeeded; the format fails at value %d", k, k+m-1, failAt)
			}
			for j := k; j < k+m; j++ {
				if got[j] != want[j] {
					t.Fatalf("value %d is %d, want %d", j, got[j], want[j])
				}
			}
			k += m
		}
	})
}

// refHybrid decodes n values of the hybrid encoding the simplest way, bit by bit, and
// returns them with the index of the first value that cannot be read (n when all can):
// input runs out, a run header is malformed, a repeated run is empty, longer than 2^31
// or cut short, a bit-packed run is empty, longer than 2^28 groups or holds no whole
// value, or a value is max or above. A bit-packed run cut short by the input's end holds its whole values.
func refHybrid(b []byte, w uint, max uint32, n int) ([]uint32, int) {
	var out []uint32
	pos := 0
	for len(out) < n {
		if pos >= len(b) {
			return out, len(out)
		}
		hdr, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			return out, len(out)
		}
		pos += k
		if hdr&1 == 0 {
			count := hdr >> 1
			nb := int(w+7) / 8
			if count == 0 || count > 1<<31 || nb > len(b)-pos {
				return out, len(out)
			}
			var v uint32
			for i := range nb {
				v |= uint32(b[pos+i]) << (8 * i)
			}
			pos += nb
			if v >= max {
				return out, len(out)
			}
			for range min(count, uint64(n-len(out))) {
				out = append(out, v)
			}
			continue
		}
		groups := hdr >> 1
		if groups == 0 || groups > 1<<28 {
			return out, len(out)
		}
		left := uint64(len(b) - pos)
		var count, nbytes uint64
		if groups*uint64(w) <= left {
			nbytes, count = groups*uint64(w), groups*8
		} else {
			nbytes, count = left, left*8/uint64(w)
			if count == 0 {
				return out, len(out)
			}
		}
		start := uint64(pos) * 8
		for i := uint64(0); i < count && len(out) < n; i++ {
			var v uint32
			for j := range uint64(w) {
				bit := start + i*uint64(w) + j
				v |= uint32(b[bit/8]>>(bit%8)&1) << j
			}
			if v >= max {
				return out, len(out)
			}
			out = append(out, v)
		}
		pos += int(nbytes)
	}
	return out, n
}

// FuzzHeader parses arbitrary bytes as a page header. A header it accepts lies within
// the bytes, has no negative size or count, is refused when cut by a byte, and reads the
// same once written again by the test's own Thrift writer.
func FuzzHeader(f *testing.F) {
	f.Add(encodeHeader(Header{Type: DataPage, Uncompressed: 8, Compressed: 8, NumValues: 2, DefEncoding: RLE}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v, want ErrCorrupt", err)
			}
			return
		}
		if h.Size <= 0 || h.Size > len(b) || h.Compressed < 0 || h.Uncompressed < 0 ||
			h.NumValues < 0 || h.NumRows < 0 || h.DefLen < 0 || h.RepLen < 0 {
			t.Fatalf("accepted %+v from %d bytes", h, len(b))
		}
		if _, err := ParseHeader(b[:h.Size-1]); err == nil {
			t.Fatalf("accepted the header without its last byte")
		}
		again, err := ParseHeader(encodeHeader(h, 5, 7, 8))
		if err != nil {
			t.Fatalf("the header written again: %v", err)
		}
		again.Size, again.RestAt, again.RestID = h.Size, h.RestAt, h.RestID
		if again != h {
			t.Fatalf("read %+v, written again and read %+v", h, again)
		}
	})
}

// TestWriteFuzzSeeds writes the seed corpora of the fuzz targets from chunks arrow-go
// writes: every physical type, v1 and v2, dictionary on and off, several codecs, a few
// small pages each. It runs only when SHMLOADER_WRITE_FUZZ_SEEDS=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("SHMLOADER_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set SHMLOADER_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz")
	}
	for _, target := range []string{"FuzzDecoder", "FuzzHybrid", "FuzzHeader"} {
		// Other seeds (crashers kept for regression) stay.
		if err := os.MkdirAll(filepath.Join("testdata", "fuzz", target), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(target, name string, args ...any) {
		var s bytes.Buffer
		s.WriteString("go test fuzz v1\n")
		for _, a := range args {
			switch a := a.(type) {
			case []byte:
				fmt.Fprintf(&s, "[]byte(%q)\n", a)
			case bool:
				fmt.Fprintf(&s, "bool(%v)\n", a)
			default:
				fmt.Fprintf(&s, "%T(%d)\n", a, a)
			}
		}
		if err := os.WriteFile(filepath.Join("testdata", "fuzz", target, name), s.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cols := []tcol{
		{name: "b", typ: parquet.Types.Boolean, opt: true, nulls: 200},
		{name: "r", typ: parquet.Types.Boolean, rle: true},
		{name: "i", typ: parquet.Types.Int32, opt: true, nulls: 200, distinct: 5},
		{name: "l", typ: parquet.Types.Int64},
		{name: "t", typ: parquet.Types.Int96, opt: true, nulls: 300},
		{name: "f", typ: parquet.Types.Float, distinct: 40},
		{name: "d", typ: parquet.Types.Double, opt: true, nulls: 100},
		{name: "s", typ: parquet.Types.ByteArray, opt: true, nulls: 200, distinct: 30},
		{name: "x", typ: parquet.Types.FixedLenByteArray, typeLen: 3, distinct: 50},
		{name: "st", typ: parquet.Types.Int32, nested: true, nulls: 400},
	}
	layouts := []struct {
		name  string
		codec compress.Compression
		v2    bool
		dict  bool
	}{
		{"v1", compress.Codecs.Uncompressed, false, false},
		{"v1.dict", compress.Codecs.Uncompressed, false, true},
		{"v2.snappy", compress.Codecs.Snappy, true, false},
		{"v2.snappy.dict", compress.Codecs.Snappy, true, true},
		{"v1.zstd.dict", compress.Codecs.Zstd, false, true},
		{"v2.gzip", compress.Codecs.Gzip, true, false},
		{"v1.brotli", compress.Codecs.Brotli, false, false},
		{"v2.lz4raw.dict", compress.Codecs.Lz4Raw, true, true},
	}
	for li, l := range layouts {
		version := parquet.DataPageV1
		if l.v2 {
			version = parquet.DataPageV2
		}
		f := tfile{cols: cols, rows: []int{60}, salt: uint64(li), props: []parquet.WriterProperty{
			parquet.WithCompression(l.codec), parquet.WithDataPageVersion(version),
			parquet.WithDictionaryDefault(l.dict), parquet.WithDictionaryPageSizeLimit(64),
			parquet.WithDataPageSize(64), parquet.WithBatchSize(20), parquet.WithStats(li%2 == 0)}}
		buf := f.write(t)
		r, err := file.NewParquetReader(bytes.NewReader(buf))
		if err != nil {
			t.Fatal(err)
		}
		for j, col := range cols {
			// Each layout seeds a few of the columns, so that the corpus stays small.
			if (j+li)%3 != 0 {
				continue
			}
			c := chunkOf(t, r, buf, 0, j)
			name := l.name + "." + col.name
			write("FuzzDecoder", name, c.Data, uint8(c.Type), uint8(c.TypeLen), uint8(c.MaxDef),
				uint8(c.Codec), uint16(c.Values), uint16(7+j), j%2 == 0)
			for i, pos := 0, 0; i < 2 && j%2 == 0; i++ {
				h, err := ParseHeader(c.Data[pos:])
				if err != nil {
					break
				}
				write("FuzzHeader", fmt.Sprintf("%s.%d", name, i), c.Data[pos:pos+h.Size])
				pos += h.Size + h.Compressed
			}
			for i, p := range splitPages(t, c.Data) {
				if i == 1 && isData(p) {
					levels, values := openPage(t, c, p)
					if c.MaxDef > 0 {
						write("FuzzHybrid", name+".levels", levels, uint8(bitWidth(uint32(c.MaxDef)+1)),
							uint32(c.MaxDef)+1, uint16(p.h.NumValues), uint8(j))
					}
					if isDictData(p) && len(values) > 0 {
						write("FuzzHybrid", name+".indices", values[1:], values[0], uint32(1)<<values[0],
							uint16(p.h.NumValues), uint8(j+5))
					}
				}
			}
		}
	}
	// Data pages v1 with BIT_PACKED levels, as Parquet 1.0 writers wrote them.
	f := tfile{cols: cols, rows: []int{64}, salt: 99, props: []parquet.WriterProperty{
		parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(64),
		parquet.WithDataPageSize(64), parquet.WithBatchSize(16)}}
	buf := rewriteFile(t, f.write(t), func(_, _ int, c Chunk, ps []page) []page { return toBitPacked(t, c, ps) }, BitPacked)
	r, err := file.NewParquetReader(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	for j, col := range cols {
		if col.name == "i" || col.name == "l" || col.name == "s" || col.name == "st" {
			c := chunkOf(t, r, buf, 0, j)
			write("FuzzDecoder", "v1.bitpacked."+col.name, c.Data, uint8(c.Type), uint8(c.TypeLen), uint8(c.MaxDef),
				uint8(c.Codec), uint16(c.Values), uint16(7+j), j%2 == 0)
		}
	}
}
