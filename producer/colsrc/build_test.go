package colsrc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/gen"
	"github.com/shmloader/shmloader/producer/pages"
)

// The arrays BuildArray makes from pages are arrow-go's: every column of every row
// group of each test dataset is read by Arrays (flat columns by the page decoder) and by
// dataset.Reader.ReadRowGroup (pqarrow, then the dataset's conversions), and the two must
// be of the dataset's type and equal, value for value and null for null.

// sameArrays reads every column of every row group of ds both ways and fails where
// they differ; skip names columns left out. It returns the flat columns compared.
func sameArrays(t *testing.T, ds *dataset.Dataset, skip ...string) []string {
	t.Helper()
	var names []string
	for _, n := range ds.ColumnNames() {
		if !slices.Contains(skip, n) {
			names = append(names, n)
		}
	}
	flat := map[string]bool{}
	a := NewArrays(ds)
	for _, rg := range ds.RowGroups {
		r, err := ds.OpenReader(rg.File)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := a.Read(context.Background(), r, rg, names)
		if err != nil {
			t.Fatalf("%s row group %d: %v", rg.File.Path, rg.Index, err)
		}
		theirs, err := r.ReadRowGroup(context.Background(), rg.Index, names)
		if err != nil {
			t.Fatalf("%s row group %d: arrow-go: %v", rg.File.Path, rg.Index, err)
		}
		for i, n := range names {
			f, _ := ds.Field(n)
			if !arrow.TypeEqual(ours[i].DataType(), f.Type) || !arrow.TypeEqual(theirs[i].DataType(), f.Type) {
				t.Fatalf("%s row group %d, column %s: %s from pages, %s from arrow-go, %s in the dataset",
					filepath.Base(rg.File.Path), rg.Index, n, ours[i].DataType(), theirs[i].DataType(), f.Type)
			}
			if !sameChunked(ours[i], theirs[i]) {
				t.Fatalf("%s row group %d, column %s (%s): the arrays differ\npages:    %v\narrow-go: %v",
					filepath.Base(rg.File.Path), rg.Index, n, f.Type, head(ours[i]), head(theirs[i]))
			}
			if _, ok := Flat(ds, rg.File, n); ok {
				flat[n] = true
			}
			ours[i].Release()
			theirs[i].Release()
		}
		r.Close()
	}
	var out []string
	for n := range flat {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// sameChunked is array.ChunkedEqual comparing floats by their bits (NaN equals NaN).
func sameChunked(a, b *arrow.Chunked) bool {
	return array.ChunkedEqual(bitsView(a), bitsView(b))
}

// bitsView is c, its floats seen as unsigned integers of their width.
func bitsView(c *arrow.Chunked) *arrow.Chunked {
	var to arrow.DataType
	switch c.DataType().ID() {
	case arrow.FLOAT16:
		to = arrow.PrimitiveTypes.Uint16
	case arrow.FLOAT32:
		to = arrow.PrimitiveTypes.Uint32
	case arrow.FLOAT64:
		to = arrow.PrimitiveTypes.Uint64
	default:
		return c
	}
	arrs := make([]arrow.Array, len(c.Chunks()))
	for i, a := range c.Chunks() {
		d := a.Data()
		arrs[i] = array.MakeFromData(array.NewData(to, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset()))
	}
	return arrow.NewChunked(to, arrs)
}

func head(c *arrow.Chunked) string {
	s := fmt.Sprint(c)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// allTypesRows is the rows of the every-type table.
const allTypesRows = 2100

// allTypes is a table of every flat type a column can have in a dataset, with nulls
// (one row in 7; a null struct nulls its fields), the first third repeating a few
// values (dictionary pages) and the rest spread (dictionaries overflow into PLAIN),
// plus a list (nested, read through arrow-go either way).
func allTypes() arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(31, 32))
	ny := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}
	inner := arrow.StructOf(arrow.Field{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true})
	fields := []arrow.Field{
		{Name: "null", Type: arrow.Null, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "lbin", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 5}, Nullable: true},
		{Name: "uuid", Type: extensions.NewUUIDType(), Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "t32s", Type: arrow.FixedWidthTypes.Time32s, Nullable: true},
		{Name: "t32ms", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "t64us", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "t64ns", Type: arrow.FixedWidthTypes.Time64ns, Nullable: true},
		{Name: "ts_s", Type: arrow.FixedWidthTypes.Timestamp_s, Nullable: true},
		{Name: "ts_ms_ny", Type: ny, Nullable: true},
		{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dec9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "dec18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 6}, Nullable: true},
		{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 18}, Nullable: true},
		{Name: "dec60", Type: &arrow.Decimal256Type{Precision: 60, Scale: 20}, Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: inner, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	digits := func(n int) *big.Int { return randDigits(rng, n) }
	for r := range allTypesRows {
		spread := r >= allTypesRows/3
		u := uint64(r % 5)
		if spread {
			u = rng.Uint64()
		}
		x := int64(u)
		for col, fb := range b.Fields() {
			if (r*7+col*3)%7 == 0 && col > 0 || col == 0 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(u&1 == 1)
			case *array.Int8Builder:
				fb.Append(int8(x))
			case *array.Int16Builder:
				fb.Append(int16(x))
			case *array.Int32Builder:
				fb.Append(int32(x))
			case *array.Int64Builder:
				fb.Append(x)
			case *array.Uint8Builder:
				fb.Append(uint8(u))
			case *array.Uint16Builder:
				fb.Append(uint16(u))
			case *array.Uint32Builder:
				fb.Append(uint32(u))
			case *array.Uint64Builder:
				fb.Append(u)
			case *array.Float16Builder:
				fb.Append(float16.New(float32(int16(x)) / 64))
			case *array.Float32Builder:
				fb.Append(float32(x) / 3)
			case *array.Float64Builder:
				fb.Append(math.Float64frombits(u&^(0x7ff<<52) | 0x3ff<<52)) // finite
			case *array.StringBuilder:
				fb.Append(fmt.Sprintf("s%x", u%100003))
			case *array.LargeStringBuilder:
				fb.Append(strings.Repeat("L", int(u%9)))
			case *array.BinaryBuilder:
				fb.Append([]byte(fmt.Sprintf("\x00%d\xff", u%1000)))
			case *array.FixedSizeBinaryBuilder:
				fb.Append([]byte(fmt.Sprintf("%05d", u%100000)))
			case *extensions.UUIDBuilder:
				var id [16]byte
				for k := range id {
					id[k] = byte(u >> (k % 8 * 8))
				}
				fb.Append(id)
			case *array.Date32Builder:
				fb.Append(arrow.Date32(int32(x) >> 12))
			case *array.Date64Builder:
				fb.Append(arrow.Date64(int64(int32(x)>>12) * 86400000))
			case *array.Time32Builder:
				if fb.Type().(*arrow.Time32Type).Unit == arrow.Second {
					fb.Append(arrow.Time32(u % 86400))
				} else {
					fb.Append(arrow.Time32(u % 86400000))
				}
			case *array.Time64Builder:
				if fb.Type().(*arrow.Time64Type).Unit == arrow.Microsecond {
					fb.Append(arrow.Time64(u % 86400000000))
				} else {
					fb.Append(arrow.Time64(u % 86400000000000))
				}
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(x >> 24)) // seconds that fit ns
			case *array.Decimal128Builder:
				p := int(fb.Type().(*arrow.Decimal128Type).Precision)
				v := big.NewInt(x % 7)
				if spread {
					v = digits(p)
				}
				fb.Append(decimal128.FromBigInt(v))
			case *array.Decimal256Builder:
				v := big.NewInt(x % 7)
				if spread {
					v = digits(60)
				}
				fb.Append(decimal256.FromBigInt(v))
			case *array.BinaryDictionaryBuilder:
				if err := fb.AppendString(fmt.Sprintf("c%d", u%11)); err != nil {
					panic(err)
				}
			case *array.StructBuilder:
				fb.Append(true)
				if a := fb.FieldBuilder(0).(*array.Int32Builder); r%5 == 1 {
					a.AppendNull()
				} else {
					a.Append(int32(x))
				}
				ib := fb.FieldBuilder(1).(*array.StructBuilder)
				if r%6 == 2 {
					ib.AppendNull()
				} else {
					ib.Append(true)
					if c := ib.FieldBuilder(0).(*array.StringBuilder); r%4 == 3 {
						c.AppendNull()
					} else {
						c.Append(fmt.Sprint(u % 97))
					}
				}
			case *array.ListBuilder:
				fb.Append(true)
				for k := range int(u % 4) {
					fb.ValueBuilder().(*array.Int32Builder).Append(int32(k))
				}
			default:
				panic(fmt.Sprintf("no case for %T", fb))
			}
		}
	}
	return b.NewRecordBatch()
}

// writeAllTypes writes the every-type table to path in row groups of 700 rows.
func writeAllTypes(t *testing.T, path string, props []parquet.WriterProperty, aprops ...pqarrow.WriterOption) {
	t.Helper()
	rec := allTypes()
	defer rec.Release()
	props = append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(700), parquet.WithDataPageSize(4096),
		parquet.WithDictionaryPageSizeLimit(2048), parquet.WithBatchSize(128)}, props...)
	testkit.WriteParquet(t, path, rec, testkit.Parquet{Props: props, Arrow: aprops})
}

// TestArraysOfEveryType: every flat type, written dictionary-encoded with overflow
// into PLAIN (data pages v1, snappy), PLAIN (v2, zstd, the Arrow schema stored), in
// the delta and byte-stream-split encodings, and with INT96 timestamps and decimals
// stored as INT32 and INT64.
func TestArraysOfEveryType(t *testing.T) {
	dir := t.TempDir()
	variants := map[string]struct {
		props  []parquet.WriterProperty
		aprops []pqarrow.WriterOption
	}{
		"dict_v1": {[]parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}, nil},
		"plain_v2": {[]parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithCompression(compress.Codecs.Zstd)}, []pqarrow.WriterOption{pqarrow.WithStoreSchema()}},
		"encodings": {[]parquet.WriterProperty{parquet.WithDictionaryDefault(false),
			parquet.WithEncodingFor("i32", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("i64", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("s", parquet.Encodings.DeltaLengthByteArray), parquet.WithEncodingFor("bin", parquet.Encodings.DeltaByteArray),
			parquet.WithEncodingFor("f32", parquet.Encodings.ByteStreamSplit), parquet.WithEncodingFor("f64", parquet.Encodings.ByteStreamSplit)}, nil},
		"int96_decint": {[]parquet.WriterProperty{parquet.WithStoreDecimalAsInteger(true)},
			[]pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true), pqarrow.WithStoreSchema()}},
	}
	for name, v := range variants {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".parquet")
			writeAllTypes(t, path, v.props, v.aprops...)
			ds, err := dataset.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds.RowGroups) != 3 {
				t.Fatalf("%d row groups", len(ds.RowGroups))
			}
			flat := sameArrays(t, ds)
			want := []string{"b", "bin", "cat", "d32", "d64", "dec18", "dec38", "dec60", "dec9", "f32", "f64", "fsb", "h",
				"i16", "i32", "i64", "i8", "lbin", "ls", "null", "s", "st.a", "st.b.c", "t32ms", "t32s", "t64ns", "t64us",
				"ts_ms_ny", "ts_ns", "ts_s", "ts_us", "u16", "u32", "u64", "u8", "uuid"}
			if !slices.Equal(flat, want) {
				t.Errorf("flat columns %v, want %v", flat, want)
			}
			meta, _ := ds.Files[0].Footer()
			for col, p := range map[string]parquet.Type{"ts_ns": parquet.Types.Int96, "dec9": parquet.Types.Int32, "dec18": parquet.Types.Int64} {
				if l, _ := ds.Files[0].Leaf(col); (l.Type == p) != (name == "int96_decint") {
					t.Errorf("%s is %s", col, l.Type)
				}
			}
			if name == "encodings" {
				for col, e := range map[string]pages.Encoding{"i64": pages.DeltaBinaryPacked, "s": pages.DeltaLengthByteArray,
					"bin": pages.DeltaByteArray, "f32": pages.ByteStreamSplit} {
					l, _ := ds.Files[0].Leaf(col)
					found := false
					for _, x := range meta.RowGroups[0].Columns[l.Index].MetaData.Encodings {
						found = found || pages.Encoding(x) == e
					}
					if !found {
						t.Errorf("%s is not in %s", col, e)
					}
				}
			}
		})
	}
}

// TestArraysOfPageTestFiles: the page path's test files (small pages whose
// dictionaries overflow into PLAIN, large v2 pages).
func TestArraysOfPageTestFiles(t *testing.T) {
	cols := pageTestCols(2600)
	dir := t.TempDir()
	for name, props := range map[string][]parquet.WriterProperty{
		"small": {parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryPageSizeLimit(1000),
			parquet.WithDataPageSize(512), parquet.WithBatchSize(64)},
		"v2": {parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageVersion(parquet.DataPageV2)},
	} {
		path := filepath.Join(dir, name+".parquet")
		writePageTestFile(t, path, cols, 1500, props...)
		ds, err := dataset.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if flat := sameArrays(t, ds); len(flat) != len(cols) {
			t.Errorf("%s: flat columns %v", name, flat)
		}
	}
}

// TestArraysOfTypedFiles: the typed files of the page path's tests (timestamps, dates,
// times, decimals; INT96). Their dictionary column holds the whole table's dictionary
// in each row group's chunk, which the page decoder refuses
// (TestDictionaryOfTheWholeTable).
func TestArraysOfTypedFiles(t *testing.T) {
	dir := t.TempDir()
	small := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000), parquet.WithDataPageSize(2048), parquet.WithDictionaryPageSizeLimit(4096)}
	for name, path := range map[string]string{
		"dict_v1": writeTyped(t, dir, "dict_v1.parquet", testkit.Parquet{Props: small}),
		"int96_int": writeTyped(t, dir, "int96_int.parquet", testkit.Parquet{Props: append(small, parquet.WithStoreDecimalAsInteger(true)),
			Arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true), pqarrow.WithStoreSchema()}}),
	} {
		ds, err := dataset.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if flat := sameArrays(t, ds, "cat"); len(flat) != 13 {
			t.Errorf("%s: flat columns %v", name, flat)
		}
	}
}

// TestArraysOfGenDataset: a dataset of `shmloader gen` (floats, categoricals and lists
// with nulls, checksums in the footer).
func TestArraysOfGenDataset(t *testing.T) {
	dir := t.TempDir()
	c := gen.DefaultConfig()
	c.Out, c.Rows, c.Files, c.RowGroupRows = dir, 3000, 2, 1024
	if err := gen.Write(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Open(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if flat := sameArrays(t, ds); len(flat) < 100 {
		t.Errorf("only %d flat columns", len(flat))
	}
}

// TestArraysOfPyarrowFiles: the datasets of bindings/python/tests/test_serve_types.py
// as pyarrow writes them (testdata/types/make.py): timestamps of every unit with and
// without zones, dates, times, decimals of several precisions in FIXED_LEN_BYTE_ARRAY,
// a categorical; INT96 timestamps and INT32 and INT64 decimals; each in a dictionary-
// encoded file and a plain one.
func TestArraysOfPyarrowFiles(t *testing.T) {
	for name, n := range map[string]int{"main": 22, "int96": 8} {
		ds, err := dataset.Open(filepath.Join("testdata", "types", name, "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if flat := sameArrays(t, ds); len(flat) != n {
			t.Errorf("%s: flat columns %v", name, flat)
		}
	}
}

// TestArraysOfPartitions: a partition column is its file's value, flat columns beside
// it are decoded.
func TestArraysOfPartitions(t *testing.T) {
	root := t.TempDir()
	for i, dir := range []string{"k=1/day=mon", "k=2/day=tue", "k=__HIVE_DEFAULT_PARTITION__/day=wed"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		writePageTestFile(t, filepath.Join(root, dir, fmt.Sprintf("p%d.parquet", i)), pageTestCols(300)[:3], 100)
	}
	ds, err := dataset.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.IsPartition("k") || !ds.IsPartition("day") {
		t.Fatalf("partitions %v", ds.Partitions)
	}
	if flat := sameArrays(t, ds); !slices.Equal(flat, []string{"i16", "i32", "i8"}) {
		t.Errorf("flat columns %v", flat)
	}
}

// TestArraysDuration: arrow-go's reader has no duration (an INT64 that the Arrow schema
// pyarrow stores names one: testdata/types/make.py); BuildArray reads its counts.
func TestArraysDuration(t *testing.T) {
	ds, err := dataset.Open(filepath.Join("testdata", "types", "duration", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ds.OpenReader(ds.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := NewArrays(ds).Read(context.Background(), r, ds.RowGroups[0], []string{"d"})
	if err != nil {
		t.Fatal(err)
	}
	defer got[0].Release()
	b := array.NewDurationBuilder(memory.DefaultAllocator, &arrow.DurationType{Unit: arrow.Millisecond})
	b.AppendValues([]arrow.Duration{1, 0, -5, math.MaxInt64}, []bool{true, false, true, true})
	want := b.NewArray()
	defer want.Release()
	if got[0].Len() != 4 || !array.Equal(got[0].Chunk(0), want) {
		t.Fatalf("%v, want %v", got[0], want)
	}
	if _, err := r.ReadRowGroup(context.Background(), 0, []string{"d"}); err == nil {
		t.Log("arrow-go reads durations now: compare the two")
	}
}

// Values arrow-go refuses are errors that name the file, row group and column: an INT96
// past the int64 nanoseconds, a BYTE_ARRAY decimal of 17 bytes. So is a type BuildArray
// does not build.
func TestArraysRefuse(t *testing.T) {
	dir := t.TempDir()
	var good, bad parquet.Int96
	good[8], good[9], good[10] = 0x8c, 0x3d, 0x25 // Julian day 2440588: 1970-01-01
	bad = good
	bad.SetNanoSeconds(nsPerDay) // one past the day
	cases := map[string]struct {
		lt    schema.LogicalType
		p     parquet.Type
		write func(file.ColumnChunkWriter, []int16) error
		want  string
	}{
		"int96": {schema.NoLogicalType{}, parquet.Types.Int96, func(cw file.ColumnChunkWriter, defs []int16) error {
			_, err := cw.(*file.Int96ColumnChunkWriter).WriteBatch([]parquet.Int96{good, bad}, defs, nil)
			return err
		}, "row 2: INT96"},
		"decimal": {schema.NewDecimalLogicalType(38, 7), parquet.Types.ByteArray, func(cw file.ColumnChunkWriter, defs []int16) error {
			_, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch([]parquet.ByteArray{{1}, make(parquet.ByteArray, 17)}, defs, nil)
			return err
		}, "row 2: decimal of 17 bytes"},
	}
	for name, c := range cases {
		path := filepath.Join(dir, name+".parquet")
		lowLevel(t, path, c.lt, c.p, -1, c.write, []int16{1, 0, 1}, false)
		ds, err := dataset.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ds.OpenReader(ds.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewArrays(ds).Read(context.Background(), r, ds.RowGroups[0], []string{"c"})
		r.Close()
		var de *dataset.Error
		if !errors.As(err, &de) || de.Path != path || de.RowGroup != 0 || de.Column != "c" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error of file, row group 0 and column c saying %q", name, err, c.want)
		}
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	if Builds(dict, parquet.Types.ByteArray, 0) || Builds(arrow.PrimitiveTypes.Float32, parquet.Types.Double, 0) {
		t.Error("builds a dictionary, or float32 from DOUBLE")
	}
	var dec pages.Decoder
	var v pages.Values
	if _, err := BuildArray(&dec, &v, pages.Chunk{Type: parquet.Types.ByteArray}, dict, 1); !errors.Is(err, ErrNoArray) {
		t.Errorf("a dictionary: %v", err)
	}
}

// Strings past 32-bit offsets go into several arrays, as arrow-go's do: 10+0+10 bytes
// fit, 10+0+10+1 do not.
func TestBuilderCutsStrings(t *testing.T) {
	b, err := newBuilder(arrow.BinaryTypes.String, parquet.Types.ByteArray, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	b.limit = 20 // as 2^31-1 bytes would be
	big := make([]byte, 10)
	v := pages.Values{N: 5, HasNull: true, Null: []byte{0, 1, 0, 0, 0}, Bin: [][]byte{big, nil, big, []byte("x"), big}}
	if err := b.add(&v, 0, 5); err != nil {
		t.Fatal(err)
	}
	arrs := b.finish()
	c := arrow.NewChunked(arrow.BinaryTypes.String, arrs)
	defer c.Release()
	var lens []int
	for _, a := range c.Chunks() {
		lens = append(lens, a.Len())
	}
	if !slices.Equal(lens, []int{3, 2}) || c.NullN() != 1 || c.Chunk(1).(*array.String).Value(0) != "x" {
		t.Fatalf("arrays of %v rows, %d nulls", lens, c.NullN())
	}
}

// TestArraysOfByteArrayDecimals: BYTE_ARRAY decimals of every length (what pqarrow
// never writes), in dictionary and plain pages.
func TestArraysOfByteArrayDecimals(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var vals []parquet.ByteArray
	var defs []int16
	for i := range 600 {
		if i%9 == 0 {
			defs = append(defs, 0)
			continue
		}
		b := make([]byte, 1+rng.IntN(16))
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		vals, defs = append(vals, b), append(defs, 1)
	}
	for _, dict := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "ba.parquet")
		lowLevel(t, path, schema.NewDecimalLogicalType(38, 7), parquet.Types.ByteArray, -1, func(cw file.ColumnChunkWriter, defs []int16) error {
			_, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(vals, defs, nil)
			return err
		}, defs, dict)
		ds, err := dataset.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if flat := sameArrays(t, ds); !slices.Equal(flat, []string{"c"}) {
			t.Errorf("flat columns %v", flat)
		}
	}
}

// TestArraysOfInt96Dictionary: dictionary-encoded INT96 pages (Spark writes them,
// arrow-go does not) build the nanoseconds plain pages do.
func TestArraysOfInt96Dictionary(t *testing.T) {
	var vals []parquet.Int96
	var defs []int16
	for i := range 300 {
		if i%7 == 3 {
			defs = append(defs, 0)
			continue
		}
		var v parquet.Int96
		v.SetNanoSeconds(int64(i%5) * 3_600_000_000_000)
		j := uint32(2440588 + i%3 - 1)
		v[8], v[9], v[10], v[11] = byte(j), byte(j>>8), byte(j>>16), byte(j>>24)
		vals, defs = append(vals, v), append(defs, 1)
	}
	var dec pages.Decoder
	var v pages.Values
	var got []*arrow.Chunked
	for _, dict := range []bool{true, false} {
		c, err := BuildArray(&dec, &v, int96Chunk(t, vals, defs, dict), arrow.FixedWidthTypes.Timestamp_ns, len(defs))
		if err != nil {
			t.Fatalf("dict %t: %v", dict, err)
		}
		defer c.Release()
		got = append(got, c)
	}
	if !array.ChunkedEqual(got[0], got[1]) || got[0].NullN() != 43 {
		t.Fatalf("dictionary pages %v, plain %v", head(got[0]), head(got[1]))
	}
	ts := got[1].Chunk(0).(*array.Timestamp)
	if ts.Value(0) != arrow.Timestamp(-nsPerDay) || ts.Value(1) != 3_600_000_000_000 {
		t.Errorf("rows 0 and 1: %d, %d, want %d, 3600000000000", ts.Value(0), ts.Value(1), -nsPerDay)
	}
}
