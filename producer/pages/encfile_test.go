package pages

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/internal/testkit"
)

// The value encodings are checked against arrow-go: a file is written with its writer,
// every chunk decoded here, and every row compared with what pqarrow reads.

// encFile describes a test file: columns c0, c1, ... all in one value encoding.
type encFile struct {
	enc    parquet.Encoding
	v2     bool
	codec  compress.Compression
	rgRows int64
	cols   []arrow.Array
}

// write writes the file in small pages (a chunk holds several), dictionary off.
func (f encFile) write(t testing.TB) []byte {
	t.Helper()
	fields := make([]arrow.Field, len(f.cols))
	for i, a := range f.cols {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: a.DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	version := parquet.DataPageV1
	if f.v2 {
		version = parquet.DataPageV2
	}
	props := []parquet.WriterProperty{
		parquet.WithDictionaryDefault(false),
		parquet.WithEncoding(f.enc),
		parquet.WithDataPageVersion(version),
		parquet.WithCompression(f.codec),
		parquet.WithDataPageSize(512),
		parquet.WithBatchSize(50),
		parquet.WithMaxRowGroupLength(f.rgRows),
		parquet.WithStats(true),
	}
	rec := array.NewRecordBatch(schema, f.cols, int64(f.cols[0].Len()))
	defer rec.Release()
	return testkit.ParquetBytes(t, rec, testkit.Parquet{Props: props})
}

// encChunk is column col's chunk in row group rg of a file, as the Decoder takes it.
func encChunk(t testing.TB, r *file.Reader, data []byte, rg, col int, enc parquet.Encoding) Chunk {
	t.Helper()
	cc, err := r.MetaData().RowGroup(rg).ColumnChunk(col)
	if err != nil {
		t.Fatal(err)
	}
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	end := start + cc.TotalCompressedSize()
	d := r.MetaData().Schema.Column(col)
	if err := Supported(d.PhysicalType(), d.MaxRepetitionLevel(), cc.Encodings()); err != nil {
		t.Fatalf("chunk (%d, %d): %v", rg, col, err)
	}
	if !slices.Contains(cc.Encodings(), enc) {
		t.Fatalf("chunk (%d, %d) is in %v, not %s", rg, col, cc.Encodings(), Encoding(enc))
	}
	return Chunk{Type: d.PhysicalType(), TypeLen: d.TypeLength(), MaxDef: d.MaxDefinitionLevel(),
		Codec: cc.Compression(), Values: cc.NumValues(), Data: data[start:end:end]}
}

// encRuns are the sizes of successive Reads: a single row, a few, and the rest of a page.
var encRuns = []int{1, 7, 1000}

// check writes the file, decodes every chunk and compares each row with arrow-go's
// reading. fixed maps a column to a FIXED_LEN_BYTE_ARRAY width to decode its BYTE_ARRAY
// chunks with (every value must have that length).
func (f encFile) check(t *testing.T, fixed map[int]int) {
	t.Helper()
	data := f.write(t)
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var dec Decoder
	var v Values
	most := 0 // pages in the chunk that has the most
	for col := range int(tbl.NumCols()) {
		want := tbl.Column(col).Data().Chunks()
		wi, wrow := 0, 0 // chunk of want and row in it
		for rg := range r.NumRowGroups() {
			c := encChunk(t, r, data, rg, col, f.enc)
			if w, ok := fixed[col]; ok {
				c.Type, c.TypeLen = parquet.Types.FixedLenByteArray, w
			}
			if err := dec.Reset(c); err != nil {
				t.Fatal(err)
			}
			rows := int(r.MetaData().RowGroup(rg).NumRows())
			for got, run := 0, 0; got < rows; run++ {
				m, err := dec.Read(min(encRuns[run%len(encRuns)], rows-got), &v)
				if err != nil {
					t.Fatalf("column %d, row group %d, row %d: %v", col, rg, got, err)
				}
				for k := range m {
					for wrow == want[wi].Len() {
						wi, wrow = wi+1, 0
					}
					a := want[wi]
					if gn, wn := v.Null[k] == 1, a.IsNull(wrow); gn != wn {
						t.Fatalf("column %d, row group %d, row %d: null %v, arrow-go says %v", col, rg, got+k, gn, wn)
					}
					if !a.IsNull(wrow) {
						if g, w := encGot(c.Type, &v, k), encWant(a, wrow); g != w {
							t.Fatalf("column %d, row group %d, row %d: %q, arrow-go says %q", col, rg, got+k, g, w)
						}
					}
					wrow++
				}
				got += m
			}
			if err := dec.Finish(); err != nil {
				t.Fatalf("column %d, row group %d: %v", col, rg, err)
			}
			most = max(most, dec.page+1)
		}
	}
	if tbl.NumRows() > 1000 && most < 3 {
		t.Errorf("at most %d pages in a chunk; the test wants several", most)
	}
}

// encGot is row k of v as bytes: fixed-width values little-endian, byte arrays as they are.
func encGot(t parquet.Type, v *Values, k int) string {
	switch t {
	case parquet.Types.Int32:
		return string(binary.LittleEndian.AppendUint32(nil, uint32(v.I32[k])))
	case parquet.Types.Int64:
		return string(binary.LittleEndian.AppendUint64(nil, uint64(v.I64[k])))
	case parquet.Types.Float:
		return string(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v.F32[k])))
	case parquet.Types.Double:
		return string(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v.F64[k])))
	}
	return string(v.Bin[k])
}

// encWant is row i of a as encGot gives it.
func encWant(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.Int32:
		return string(binary.LittleEndian.AppendUint32(nil, uint32(a.Value(i))))
	case *array.Int64:
		return string(binary.LittleEndian.AppendUint64(nil, uint64(a.Value(i))))
	case *array.Float32:
		return string(binary.LittleEndian.AppendUint32(nil, math.Float32bits(a.Value(i))))
	case *array.Float64:
		return string(binary.LittleEndian.AppendUint64(nil, math.Float64bits(a.Value(i))))
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.FixedSizeBinary:
		return string(a.Value(i))
	}
	panic(fmt.Sprintf("no test comparison for %s", a.DataType()))
}

// encVariants runs f for data pages v1 and v2 (compressed), with and without nulls.
func encVariants(t *testing.T, f func(t *testing.T, v2, nulls bool, codec compress.Compression)) {
	for _, v2 := range []bool{false, true} {
		for _, nulls := range []bool{false, true} {
			codec := compress.Codecs.Uncompressed
			if v2 {
				codec = compress.Codecs.Snappy
			}
			t.Run(fmt.Sprintf("v2=%v/nulls=%v", v2, nulls), func(t *testing.T) { f(t, v2, nulls, codec) })
		}
	}
}

// encNull says whether row i of a column with nulls is null: a pattern with runs.
func encNull(nulls bool, i int) bool { return nulls && (i%3 == 1 || i%97 < 9) }

// encBuild builds an array of n rows: null rows per encNull, the others from val.
func encBuild[B interface {
	array.Builder
	Append(T)
}, T any](b B, n int, nulls bool, val func(i int) T) arrow.Array {
	defer b.Release()
	for i := range n {
		if encNull(nulls, i) {
			b.AppendNull()
		} else {
			b.Append(val(i))
		}
	}
	return b.NewArray()
}

// encNulls builds an array of n null rows.
func encNulls(b array.Builder, n int) arrow.Array {
	defer b.Release()
	b.AppendNulls(n)
	return b.NewArray()
}

// encErr checks that err wraps ErrCorrupt (or ErrUnsupported, when want starts with
// "unsupported: ") and says want.
func encErr(t *testing.T, err error, want string) {
	t.Helper()
	kind := ErrCorrupt
	if s, ok := strings.CutPrefix(want, "unsupported: "); ok {
		kind, want = ErrUnsupported, s
	}
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q (%T), want %v saying %q", err, err, kind, want)
	}
}

// Once a Decoder has read a chunk, reading it again allocates nothing: the readers keep
// their buffers from page to page.
func TestEncodingsSteadyState(t *testing.T) {
	mem := memory.DefaultAllocator
	n := 3000
	num := []arrow.Array{
		encBuild(array.NewInt32Builder(mem), n, true, func(i int) int32 { return int32(i * i) }),
		encBuild(array.NewInt64Builder(mem), n, true, func(i int) int64 { return int64(i) << 40 }),
	}
	flt := append([]arrow.Array{
		encBuild(array.NewFloat64Builder(mem), n, true, func(i int) float64 { return float64(i) / 3 }),
		encBuild(array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 3}), n, true, func(i int) []byte { return []byte{byte(i), 1, 2} }),
	}, num...)
	files := []encFile{
		{enc: parquet.Encodings.DeltaBinaryPacked, cols: num},
		{enc: parquet.Encodings.DeltaLengthByteArray, cols: encStrings(n, true)},
		{enc: parquet.Encodings.DeltaByteArray, cols: encStrings(n, true), v2: true},
		{enc: parquet.Encodings.ByteStreamSplit, cols: flt},
	}
	for _, f := range files {
		f.codec, f.rgRows = compress.Codecs.Snappy, int64(n)
		data := f.write(t)
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var dec Decoder
		var v Values
		for col := range f.cols {
			c := encChunk(t, r, data, 0, col, f.enc)
			read := func() {
				if err := dec.Reset(c); err != nil {
					t.Fatal(err)
				}
				for got := 0; got < n; {
					m, err := dec.Read(100, &v)
					if err != nil {
						t.Fatal(err)
					}
					got += m
				}
				if err := dec.Finish(); err != nil {
					t.Fatal(err)
				}
			}
			read()
			if a := testing.AllocsPerRun(5, read); a != 0 {
				t.Errorf("%s, column %d: %v allocations per chunk", Encoding(f.enc), col, a)
			}
		}
	}
}

// Supported accepts each encoding for the physical types it applies to and no other, and
// refuses a repeated column.
func TestEncodingsSupported(t *testing.T) {
	ty := parquet.Types
	all := []parquet.Type{ty.Boolean, ty.Int32, ty.Int64, ty.Int96, ty.Float, ty.Double, ty.ByteArray, ty.FixedLenByteArray}
	ok := map[parquet.Encoding][]parquet.Type{
		parquet.Encodings.DeltaBinaryPacked:    {ty.Int32, ty.Int64},
		parquet.Encodings.DeltaLengthByteArray: {ty.ByteArray},
		parquet.Encodings.DeltaByteArray:       {ty.ByteArray, ty.FixedLenByteArray},
		parquet.Encodings.ByteStreamSplit:      {ty.Float, ty.Double, ty.Int32, ty.Int64, ty.FixedLenByteArray},
		parquet.Encodings.BitPacked:            all, // levels: listed for any type
		parquet.Encodings.Plain:                all,
		parquet.Encodings.PlainDict:            all,
		parquet.Encodings.RLEDict:              all,
	}
	for e, types := range ok {
		for _, typ := range all {
			err := Supported(typ, 0, []parquet.Encoding{parquet.Encodings.RLE, e})
			if want := slices.Contains(types, typ); (err == nil) != want || err != nil && !errors.Is(err, ErrUnsupported) {
				t.Errorf("Supported(%s, %s) = %v, want supported %v", typ, Encoding(e), err, want)
			}
		}
	}
	if err := Supported(ty.Int32, 1, []parquet.Encoding{parquet.Encodings.RLE}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a repeated column: %v", err)
	}
}

// A broken values section fails the Decoder's Read with an *Error that names the page
// and wraps ErrCorrupt: here the first byte of the DELTA_BINARY_PACKED header, the block
// size (128 in arrow-go's files), made 129.
func TestEncodingsDecoderError(t *testing.T) {
	mem := memory.DefaultAllocator
	for _, f := range []encFile{
		{enc: parquet.Encodings.DeltaBinaryPacked, cols: []arrow.Array{encBuild(array.NewInt64Builder(mem), 500, false, func(i int) int64 { return int64(i) })}},
		{enc: parquet.Encodings.DeltaLengthByteArray, cols: encStrings(500, false)[:1]},
		{enc: parquet.Encodings.DeltaByteArray, cols: encStrings(500, false)[:1]},
	} {
		f.codec, f.rgRows = compress.Codecs.Uncompressed, 500
		data := f.write(t)
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		c := encChunk(t, r, data, 0, 0, f.enc)
		h, err := ParseHeader(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		c.Data = bytes.Clone(c.Data)
		lv := int(binary.LittleEndian.Uint32(c.Data[h.Size:])) // page v1: definition levels first
		if c.Data[h.Size+4+lv] != 0x80 {
			t.Fatalf("%s: values section starts %#x, not a block size of 128", Encoding(f.enc), c.Data[h.Size+4+lv])
		}
		c.Data[h.Size+4+lv] = 0x81
		var dec Decoder
		if err := dec.Reset(c); err != nil {
			t.Fatal(err)
		}
		_, err = dec.Read(10, &Values{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Page != 0 {
			t.Fatalf("%s: error %v, want one of page 0", Encoding(f.enc), err)
		}
		encErr(t, err, "page 0 (chunk offset 0): ")
		encErr(t, err, "129 values per block, not a positive multiple of 128")
	}
}
