package colsrc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/transform"
)

// The tests here write Parquet files of timestamp, date, time, decimal and dictionary
// columns and read every output both ways: through arrow-go (ApplyTo) and through the
// page decoder (Decoders.Apply). The two must give the same bytes, or both fail.

// bothPaths applies o (its columns exact names) to every row group of the dataset at
// path, all rows and then every third row, both ways, and checks that the bytes agree.
// It returns the all-rows bytes of the first tensor, row groups in order, or the error
// both paths gave.
func bothPathsOfFile(t *testing.T, path string, o config.Output) ([]byte, error) {
	t.Helper()
	ds, err := dataset.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if o.Name == "" {
		o.Name = "out"
	}
	fields := make([]arrow.Field, len(o.Columns))
	for i, c := range o.Columns {
		var ok bool
		if fields[i], ok = ds.Field(c); !ok {
			t.Fatalf("no column %q", c)
		}
	}
	out, err := transform.Compile(o, fields)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	var all []byte
	var st Decoders
	for _, rg := range ds.RowGroups {
		r, err := ds.OpenReader(rg.File)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		leaves := make([]dataset.Leaf, len(o.Columns))
		for j, c := range o.Columns {
			l, ok := rg.File.Leaf(c)
			if !ok || !out.ReadsValues(j, Kind(out.ColumnType(j), l.Type, l.TypeLen)) {
				t.Fatalf("column %q (%s, %s): not read from pages", c, fields[j].Type, l.Type)
			}
			if err := rg.File.PagesReadable(rg.Index, l); err != nil {
				t.Fatalf("column %q: %v", c, err)
			}
			leaves[j] = l
		}
		chunks, _, err := r.ReadChunks(context.Background(), rg.Index, leaves, nil)
		if err != nil {
			t.Fatal(err)
		}
		var every3 []int32
		for k := int32(0); k < int32(rg.Rows); k += 3 {
			every3 = append(every3, k)
		}
		// every3 first: a value arrow-go refuses fails it in a row not selected too.
		for _, sel := range [][]int32{every3, nil} {
			n := int(rg.Rows)
			if sel != nil {
				n = len(sel)
			}
			mkDst := func() transform.Dest {
				d := transform.Dest{}
				for i := range out.Tensors() {
					d.Bufs = append(d.Bufs, make([]byte, n*rowBytes(out, i)))
					d.Stride = append(d.Stride, rowBytes(out, i))
				}
				return d
			}
			da, dp := mkDst(), mkDst()
			cols, errA := r.ReadRowGroup(context.Background(), rg.Index, o.Columns)
			if errA == nil {
				errA = out.ApplyTo(cols, sel, da)
			}
			errP := st.Apply(out, chunks, nil, int(rg.Rows), sel, dp)
			switch {
			case (errA == nil) != (errP == nil):
				t.Fatalf("row group %d: arrow-go: %v; pages: %v", rg.Index, errA, errP)
			case errA != nil:
				return nil, fmt.Errorf("arrow-go: %w; pages: %w", errA, errP)
			}
			for i := range da.Bufs {
				if !bytes.Equal(da.Bufs[i], dp.Bufs[i]) {
					t.Fatalf("output %v, row group %d, sel %v: arrow-go and pages differ\narrow-go %v\npages    %v",
						o.Columns, rg.Index, sel != nil, describeDiff(da.Bufs[i], dp.Bufs[i]), describeDiff(dp.Bufs[i], da.Bufs[i]))
				}
			}
			if sel == nil {
				all = append(all, da.Bufs[0]...)
			}
		}
	}
	return all, nil
}

func describeDiff(a, b []byte) string {
	for i := range a {
		if a[i] != b[i] {
			lo := i &^ 7
			return fmt.Sprintf("at byte %d: % x", i, a[lo:min(lo+16, len(a))])
		}
	}
	return "same"
}

// typedRows is the test table: rows of timestamps (clustered around DST changes, then
// spread), dates, times, decimals and categories, with nulls.
const typedRows = 3000

func typedRecord() arrow.RecordBatch {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(11, 12))
	ny := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}
	fields := []arrow.Field{
		{Name: "ts_ms_ny", Type: ny, Nullable: true},
		{Name: "ts_us", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "ts_ns_utc", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "ts_s", Type: arrow.FixedWidthTypes.Timestamp_s, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "t32ms", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
		{Name: "t64us", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "t64ns", Type: arrow.FixedWidthTypes.Time64ns, Nullable: true},
		{Name: "dec9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "dec18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 6}, Nullable: true},
		{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 18}, Nullable: true},
		{Name: "dec60", Type: &arrow.Decimal256Type{Precision: 60, Scale: 20}, Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	dst := time.Date(2021, 3, 14, 7, 0, 0, 0, time.UTC).UnixMilli()
	digits := func(n int) *big.Int { return randDigits(rng, n) }
	for i := range typedRows {
		null := func(k int) bool { return (i+k)%13 == 0 }
		// The first third repeats few values (dictionary pages), the rest rarely repeats
		// (the writer falls back to plain pages within the chunk).
		spread := i >= typedRows/3
		pick := func(small, wide int64) int64 {
			if spread {
				return wide
			}
			return small
		}
		app := func(col int, v int64) {
			if null(col) {
				b.Field(col).AppendNull()
				return
			}
			switch fb := b.Field(col).(type) {
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v))
			case *array.Date64Builder:
				fb.Append(arrow.Date64(v))
			case *array.Time32Builder:
				fb.Append(arrow.Time32(v))
			case *array.Time64Builder:
				fb.Append(arrow.Time64(v))
			}
		}
		app(0, dst+pick(int64(i%7-3)*1800_000, rng.Int64N(8e12)-4e12))
		app(1, pick(int64(i%5)*86_400_000_000, rng.Int64N(1<<60)-1<<59))
		app(2, pick(int64(i%3)-1, int64(rng.Uint64())))
		app(3, pick(int64(i%4)*3600, rng.Int64N(6e11)-3e11))
		app(4, pick(int64(i%6)+10957, rng.Int64N(1<<31)-1<<30))
		app(5, pick(int64(i%6), rng.Int64N(2e7)-1e7)*86_400_000)
		app(6, pick(int64(i%10)*60_000, rng.Int64N(86_400_000)))
		app(7, pick(int64(i%10), rng.Int64N(86_400_000_000)))
		app(8, pick(int64(i%10)*1e9, rng.Int64N(86_400_000_000_000)))
		for col, p := range []int{9, 18, 38, 60} {
			col += 9
			if null(col) {
				b.Field(col).AppendNull()
				continue
			}
			v := digits(p)
			if !spread {
				v = big.NewInt(int64(i%4) - 2)
			}
			switch fb := b.Field(col).(type) {
			case *array.Decimal128Builder:
				fb.Append(decimal128.FromBigInt(v))
			case *array.Decimal256Builder:
				fb.Append(decimal256.FromBigInt(v))
			}
		}
		if null(13) {
			b.Field(13).AppendNull()
		} else if err := b.Field(13).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("c%d", pick(int64(i%9), rng.Int64N(1e6)))); err != nil {
			panic(err)
		}
	}
	return b.NewRecordBatch()
}

// writeTyped writes the test table to dir/name with the writer's options.
func writeTyped(t *testing.T, dir, name string, o testkit.Parquet) string {
	t.Helper()
	rec := typedRecord()
	defer rec.Release()
	return testkit.WriteParquet(t, filepath.Join(dir, name), rec, o)
}

// typedOutputs are outputs over every column of the test table, and the steps each
// column type takes.
func typedOutputs(ds *dataset.Dataset) []config.Output {
	var outs []config.Output
	add := func(col string, dtype string, ts ...config.Transform) {
		outs = append(outs, config.Output{Columns: []string{col}, DType: dtype, Transforms: ts})
	}
	timeOfDay := map[string]bool{"unix_seconds": true, "unix_ms": true, "unix_us": true, "unix_ns": true,
		"hour": true, "minute": true, "second": true}
	for _, f := range ds.Schema.Fields() {
		if f.Name == "cat" {
			continue // a dictionary larger than its chunks: TestDictionaryOfTheWholeTable
		}
		if f.Type.ID() != arrow.DICTIONARY && f.Type.ID() != arrow.STRING {
			add(f.Name, "")
		}
		switch f.Type.ID() {
		case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64:
			for _, p := range config.DatetimeParts {
				if (f.Type.ID() == arrow.TIME32 || f.Type.ID() == arrow.TIME64) && !timeOfDay[p] {
					continue
				}
				add(f.Name, "float64", dt(p, ""))
			}
			if f.Type.ID() == arrow.TIMESTAMP {
				add(f.Name, "", dt("hour", "Asia/Kolkata"), config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Num: -1, IsInt: true, Int: -1}})
				add(f.Name, "", dt("day_of_year", "-03:30"))
			}
		case arrow.DECIMAL128, arrow.DECIMAL256:
			add(f.Name, "float64")
			add(f.Name, "", config.Transform{Op: config.OpDecimal, Unscaled: true})
			add(f.Name, "", config.Transform{Op: config.OpDecimal, Scale: 24}, config.Transform{Op: config.OpClip, Min: fp(-1e18), MinExact: config.Scalar{IsInt: true, Int: -1e18}})
		case arrow.DICTIONARY, arrow.STRING:
			add(f.Name, "", config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Str: "none", IsStr: true}}, config.Transform{Op: config.OpHashBucket, Buckets: 97})
		}
	}
	return outs
}

// TestTypedPagesMatchArrow: every type, every step, dictionary and plain pages, data
// pages v1 and v2, INT96, decimals stored as INT32, INT64 and FIXED_LEN_BYTE_ARRAY:
// the page decoder gives arrow-go's bytes.
func TestTypedPagesMatchArrow(t *testing.T) {
	dir := t.TempDir()
	small := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000), parquet.WithDataPageSize(2048), parquet.WithDictionaryPageSizeLimit(4096)}
	files := map[string]string{
		"dict_v1": writeTyped(t, dir, "dict_v1.parquet", testkit.Parquet{Props: small}),
		"plain_v2": writeTyped(t, dir, "plain_v2.parquet", testkit.Parquet{Props: append(small, parquet.WithDictionaryDefault(false),
			parquet.WithDataPageVersion(parquet.DataPageV2)), Arrow: []pqarrow.WriterOption{pqarrow.WithStoreSchema()}}),
		"int96_int": writeTyped(t, dir, "int96_int.parquet", testkit.Parquet{Props: append(small, parquet.WithStoreDecimalAsInteger(true)),
			Arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true), pqarrow.WithStoreSchema()}}),
	}
	for name, path := range files {
		ds, err := dataset.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := ds.Files[0].Footer()
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, f := range ds.Schema.Fields() {
			l, _ := ds.Files[0].Leaf(f.Name)
			enc := meta.RowGroups[0].Columns[l.Index].MetaData.Encodings
			cols = append(cols, fmt.Sprintf("%s %s %s %v", f.Name, f.Type, l.Type, enc))
		}
		t.Logf("%s:\n%s", name, strings.Join(cols, "\n"))
		for _, o := range typedOutputs(ds) {
			if _, err := bothPathsOfFile(t, path, o); err != nil {
				t.Fatalf("%s %v: %v", name, o.Columns, err)
			}
		}
	}
	// The INT96 file holds INT96 and INT32/INT64 decimals, the others FIXED_LEN_BYTE_ARRAY.
	ds, _ := dataset.Open(files["int96_int"])
	for col, want := range map[string]parquet.Type{"ts_ns_utc": parquet.Types.Int96, "ts_us": parquet.Types.Int64, "dec9": parquet.Types.Int32, "dec18": parquet.Types.Int64} {
		if l, _ := ds.Files[0].Leaf(col); l.Type != want {
			t.Errorf("int96_int %s is %s, want %s", col, l.Type, want)
		}
	}
}

// TestTypedPagesValues: what the page path gives is the value the spec gives: a
// timestamp's ms as stored, INT96 as ns, decimals as Python's float(Decimal).
func TestTypedPagesValues(t *testing.T) {
	dir := t.TempDir()
	path := writeTyped(t, dir, "v.parquet", testkit.Parquet{Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000)},
		Arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}})
	rec := typedRecord()
	defer rec.Release()
	for _, c := range []struct {
		col  int
		name string
		mul  int64
	}{{3, "ts_s", 1000}, {2, "ts_ns_utc", 1}} { // Parquet has no seconds: ts_s is stored in ms; ts_ns_utc as INT96
		got, err := bothPathsOfFile(t, path, config.Output{Columns: []string{c.name}})
		if err != nil {
			t.Fatal(err)
		}
		ts := rec.Column(c.col).(*array.Timestamp)
		for i, v := range testkit.Int64s(got) {
			want := int64(ts.Value(i)) * c.mul
			if ts.IsNull(i) {
				want = 0
			}
			if v != want {
				t.Fatalf("%s row %d: %d, want %d", c.name, i, v, want)
			}
		}
	}
	got, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"dec38"}, DType: "float64"})
	if err != nil {
		t.Fatal(err)
	}
	dec := rec.Column(11).(*array.Decimal128)
	for i, v := range testkit.F64s(got) {
		want := nan
		if !dec.IsNull(i) {
			want = exactFloat(dec.Value(i).BigInt(), 18)
		}
		if math.Float64bits(v) != math.Float64bits(want) && !(v != v && want != want) {
			t.Fatalf("dec38 row %d: %v, want %v", i, v, want)
		}
	}
}

// lowLevel writes one column of physical type p (and logical type lt) through the
// column writer, for what pqarrow never writes: BYTE_ARRAY decimals, bad INT96 values.
func lowLevel(t *testing.T, path string, lt schema.LogicalType, p parquet.Type, typeLen int, write func(file.ColumnChunkWriter, []int16) error, defs []int16, dict bool) {
	t.Helper()
	node, err := schema.NewPrimitiveNodeLogical("c", parquet.Repetitions.Optional, lt, p, typeLen, -1)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{node}, -1)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteColumns(t, path, root, []parquet.WriterProperty{parquet.WithDictionaryDefault(dict)}, 1, func(_, _ int, cw file.ColumnChunkWriter) error {
		return write(cw, defs)
	})
}

// TestByteArrayDecimals: BYTE_ARRAY decimals of every length, negative ones included,
// read the same both ways and as exactly as Python's float(Decimal).
func TestByteArrayDecimals(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var vals []parquet.ByteArray
	var want []*big.Int
	var defs []int16
	for i := range 500 {
		if i%11 == 0 {
			defs = append(defs, 0)
			want = append(want, nil)
			continue
		}
		b := make([]byte, 1+rng.IntN(16))
		for k := range b {
			b[k] = byte(rng.Uint32())
		}
		v := new(big.Int).SetBytes(b)
		if b[0] >= 0x80 {
			v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		vals, defs, want = append(vals, b), append(defs, 1), append(want, v)
	}
	for _, dict := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "ba.parquet")
		lowLevel(t, path, schema.NewDecimalLogicalType(38, 7), parquet.Types.ByteArray, -1, func(cw file.ColumnChunkWriter, defs []int16) error {
			_, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(vals, defs, nil)
			return err
		}, defs, dict)
		got, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"c"}, DType: "float64"})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range testkit.F64s(got) {
			w := nan
			if want[i] != nil {
				w = exactFloat(want[i], 7)
			}
			if math.Float64bits(v) != math.Float64bits(w) && !(v != v && w != w) {
				t.Fatalf("row %d (%s): %v, want %v", i, want[i], v, w)
			}
		}
		got, err = bothPathsOfFile(t, path, config.Output{Columns: []string{"c"}, Transforms: []config.Transform{{Op: config.OpDecimal, Unscaled: true}}})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range testkit.Int64s(got) {
			var w int64
			switch {
			case want[i] == nil:
			case want[i].IsInt64():
				w = want[i].Int64()
			case want[i].Sign() > 0:
				w = math.MaxInt64
			default:
				w = math.MinInt64
			}
			if v != w {
				t.Fatalf("unscaled row %d (%s): %d, want %d", i, want[i], v, w)
			}
		}
	}
	// An empty value and one of 17 bytes are errors both ways.
	for _, bad := range []parquet.ByteArray{{}, make(parquet.ByteArray, 17)} {
		path := filepath.Join(t.TempDir(), "bad.parquet")
		lowLevel(t, path, schema.NewDecimalLogicalType(38, 7), parquet.Types.ByteArray, -1, func(cw file.ColumnChunkWriter, defs []int16) error {
			_, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch([]parquet.ByteArray{{1}, bad}, defs, nil)
			return err
		}, []int16{1, 0, 1}, false)
		if _, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"c"}}); err == nil {
			t.Errorf("a decimal of %d bytes read", len(bad))
		}
	}
}

// TestInt96Errors: INT96 values arrow-go refuses (nanoseconds past the day, instants
// past the int64 nanoseconds) fail both ways, in plain and in dictionary pages; the
// int64 limits themselves read.
func TestInt96Errors(t *testing.T) {
	i96 := func(nanos uint64, julian uint32) parquet.Int96 {
		var v parquet.Int96
		v.SetNanoSeconds(int64(nanos))
		v[8], v[9], v[10], v[11] = byte(julian), byte(julian>>8), byte(julian>>16), byte(julian>>24)
		return v
	}
	const epoch = 2440588
	maxDays := uint32(math.MaxInt64 / nsPerDay)
	minDays := uint32(epoch + math.MinInt64/nsPerDay - 1)
	good := []parquet.Int96{i96(0, epoch), i96(1, epoch-1), i96(uint64(math.MaxInt64%nsPerDay), epoch+maxDays),
		i96(uint64(nsPerDay+math.MinInt64%nsPerDay), minDays), i96(uint64(nsPerDay-1), epoch+1)}
	want := []int64{0, 1 - nsPerDay, math.MaxInt64, math.MinInt64, 2*nsPerDay - 1}
	write := func(vals []parquet.Int96, defs []int16) func(cw file.ColumnChunkWriter, _ []int16) error {
		return func(cw file.ColumnChunkWriter, _ []int16) error {
			_, err := cw.(*file.Int96ColumnChunkWriter).WriteBatch(vals, defs, nil)
			return err
		}
	}
	for _, dict := range []bool{false} { // arrow-go writes no INT96 dictionary: TestInt96DictionaryPages
		path := filepath.Join(t.TempDir(), "good.parquet")
		defs := []int16{1, 1, 0, 1, 1, 1}
		lowLevel(t, path, schema.NoLogicalType{}, parquet.Types.Int96, -1, write(good, defs), defs, dict)
		got, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"c"}})
		if err != nil {
			t.Fatal(err)
		}
		testkit.SameInts(t, "INT96", testkit.Int64s(got), []int64{want[0], want[1], 0, want[2], want[3], want[4]})
		for _, bad := range []parquet.Int96{i96(uint64(nsPerDay), epoch), i96(uint64(math.MaxInt64%nsPerDay)+1, epoch+maxDays), i96(0, epoch+maxDays+1), i96(0, minDays-1)} {
			path := filepath.Join(t.TempDir(), "bad.parquet")
			defs := []int16{1, 0, 1}
			lowLevel(t, path, schema.NoLogicalType{}, parquet.Types.Int96, -1, write([]parquet.Int96{good[0], bad}, defs), defs, dict)
			_, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"c"}, Transforms: []config.Transform{dt("hour", "")}})
			if err == nil || !strings.Contains(err.Error(), "INT96") {
				t.Errorf("dict %t: INT96 %x read: %v", dict, bad[:], err)
			}
		}
	}
}

// tellBuffer is the sink a page writer needs.
type tellBuffer struct{ bytes.Buffer }

func (b *tellBuffer) Tell() int64 { return int64(b.Len()) }

// int96Chunk writes one INT96 column chunk, dictionary-encoded or not, as Spark does
// (arrow-go's file writer never dictionary-encodes INT96).
func int96Chunk(t *testing.T, vals []parquet.Int96, defs []int16, dict bool) pages.Chunk {
	t.Helper()
	node, err := schema.NewPrimitiveNodeLogical("c", parquet.Repetitions.Optional, schema.NoLogicalType{}, parquet.Types.Int96, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{node}, -1)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithDataPageSize(64))
	cc := metadata.NewFileMetadataBuilder(schema.NewSchema(root), props, nil).AppendRowGroup().NextColumnChunk()
	var buf tellBuffer
	pager, err := file.NewPageWriter(&buf, compress.Codecs.Uncompressed, 0, cc, 0, 0, memory.DefaultAllocator, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := parquet.Encodings.Plain
	if dict {
		enc = props.DictionaryIndexEncoding()
	}
	w := file.NewInt96ColumnChunkWriter(cc, pager, dict, enc, props)
	if _, err := w.WriteBatch(vals, defs, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return pages.Chunk{Type: parquet.Types.Int96, MaxDef: 1, Codec: compress.Codecs.Uncompressed, Values: int64(len(defs)), Data: buf.Bytes()}
}

// TestInt96DictionaryPages: dictionary-encoded INT96 pages read as plain ones do, and a
// refused value fails, in a selected row or not.
func TestInt96DictionaryPages(t *testing.T) {
	day := func(d int64) parquet.Int96 {
		var v parquet.Int96
		v.SetNanoSeconds(floorMod(d, 7) * 3_600_000_000_000)
		j := uint32(2440588 + d)
		v[8], v[9], v[10], v[11] = byte(j), byte(j>>8), byte(j>>16), byte(j>>24)
		return v
	}
	var vals []parquet.Int96
	var defs []int16
	var want []int64
	for i := range int64(400) {
		if i%9 == 4 {
			defs, want = append(defs, 0), append(want, -1)
			continue
		}
		d := i%5 - 2
		vals, defs, want = append(vals, day(d)), append(defs, 1), append(want, d*nsPerDay+floorMod(d, 7)*3_600_000_000_000)
	}
	out, err := transform.Compile(config.Output{Name: "o", Transforms: []config.Transform{dt("unix_ns", ""),
		{Op: config.OpFillNull, Fill: config.Scalar{Num: -1, IsInt: true, Int: -1}}}}, []arrow.Field{{Name: "c", Type: arrow.FixedWidthTypes.Timestamp_ns}})
	if err != nil {
		t.Fatal(err)
	}
	apply := func(c pages.Chunk, sel []int32) ([]byte, error) {
		n := len(defs)
		if sel != nil {
			n = len(sel)
		}
		d := transform.Dest{Bufs: [][]byte{make([]byte, 8*n)}, Stride: []int{8}}
		var st Decoders
		err := st.Apply(out, []pages.Chunk{c}, nil, len(defs), sel, d)
		return d.Bufs[0], err
	}
	for _, dict := range []bool{true, false} {
		c := int96Chunk(t, vals, defs, dict)
		d := pages.Decoder{Indices: true}
		var v pages.Values
		if err := d.Reset(c); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Read(10, &v); err != nil || v.Dict != dict {
			t.Fatalf("dict %t: the chunk's first page is dictionary-encoded: %t (%v)", dict, v.Dict, err)
		}
		got, err := apply(c, nil)
		if err != nil {
			t.Fatalf("dict %t: %v", dict, err)
		}
		testkit.SameInts(t, fmt.Sprintf("dict %t", dict), testkit.Int64s(got), want)
	}
	for _, sel := range [][]int32{nil, {0, 1}} {
		bad := append([]parquet.Int96(nil), vals...)
		bad[len(bad)-3].SetNanoSeconds(nsPerDay) // one past the day
		for _, dict := range []bool{true, false} {
			if _, err := apply(int96Chunk(t, bad, defs, dict), sel); err == nil || !strings.Contains(err.Error(), "INT96") {
				t.Errorf("dict %t, sel %v: a bad INT96 read: %v", dict, sel, err)
			}
		}
	}
}

// TestDate64Pages: a date64 column (pqarrow never infers one from a file, but a schema
// may name it) reads DATE pages as arrow-go's transferDate64 does: days × 86400000.
func TestDate64Pages(t *testing.T) {
	path := writeTyped(t, t.TempDir(), "d.parquet", testkit.Parquet{Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000)}})
	ds, err := dataset.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	days, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"d32"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := transform.Compile(config.Output{Name: "o"}, []arrow.Field{{Name: "d32", Type: arrow.FixedWidthTypes.Date64}})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	var st Decoders
	for _, rg := range ds.RowGroups {
		r, err := ds.OpenReader(rg.File)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := rg.File.Leaf("d32")
		chunks, _, err := r.ReadChunks(context.Background(), rg.Index, []dataset.Leaf{l}, nil)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		d := transform.Dest{Bufs: [][]byte{make([]byte, 8*rg.Rows)}, Stride: []int{8}}
		if err := st.Apply(out, chunks, nil, int(rg.Rows), nil, d); err != nil {
			t.Fatal(err)
		}
		got = append(got, testkit.Int64s(d.Bufs[0])...)
	}
	want := testkit.Int64s(days)
	for i := range want {
		want[i] *= 86_400_000
	}
	testkit.SameInts(t, "date64", got, want)
}

// TestDictionaryOfTheWholeTable: arrow-go writes a dictionary array's whole dictionary
// into every row group's chunk, more entries than the chunk has values (as a pandas
// categorical written in row groups smaller than its categories is), and reads such
// chunks; so does the page decoder, and both ways give the same bytes.
func TestDictionaryOfTheWholeTable(t *testing.T) {
	path := writeTyped(t, t.TempDir(), "cat.parquet", testkit.Parquet{Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1000)}})
	ds, err := dataset.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ds.Field("cat")
	out, err := transform.Compile(config.Output{Name: "o", Transforms: []config.Transform{
		{Op: config.OpFillNull, Fill: config.Scalar{Str: "none", IsStr: true}}, {Op: config.OpHashBucket, Buckets: 97}}}, []arrow.Field{f})
	if err != nil {
		t.Fatal(err)
	}
	var st Decoders
	for _, rg := range ds.RowGroups {
		r, err := ds.OpenReader(rg.File)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		l, _ := rg.File.Leaf("cat")
		chunks, _, err := r.ReadChunks(context.Background(), rg.Index, []dataset.Leaf{l}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := r.ReadRowGroup(context.Background(), rg.Index, []string{"cat"})
		if err != nil {
			t.Fatal(err)
		}
		da := transform.Dest{Bufs: [][]byte{make([]byte, 8*rg.Rows)}, Stride: []int{8}}
		dp := transform.Dest{Bufs: [][]byte{make([]byte, 8*rg.Rows)}, Stride: []int{8}}
		if err := out.ApplyTo(cols, nil, da); err != nil {
			t.Fatal(err)
		}
		if err := st.Apply(out, chunks, nil, int(rg.Rows), nil, dp); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da.Bufs[0], dp.Bufs[0]) {
			t.Fatalf("row group %d: arrow-go and pages differ", rg.Index)
		}
	}
}

// TestDecimalStepAcrossDictionaryFallback: a decimal column whose dictionary overflows
// into PLAIN within a chunk, read by the decimal step, gives arrow-go's integers in the
// block that holds both kinds of page.
func TestDecimalStepAcrossDictionaryFallback(t *testing.T) {
	path := writeTyped(t, t.TempDir(), "d.parquet", testkit.Parquet{Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(typedRows),
		parquet.WithDataPageSize(2048), parquet.WithDictionaryPageSizeLimit(4096)}})
	ds, err := dataset.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ds.OpenReader(ds.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, _ := ds.Files[0].Leaf("dec18")
	chunks, _, err := r.ReadChunks(context.Background(), 0, []dataset.Leaf{l}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if encs := dataPageEncodings(t, chunks[0].Data); encs[0] != pages.RLEDictionary || encs[len(encs)-1] != pages.Plain {
		t.Fatalf("data pages %v, want dictionary-encoded, then PLAIN", encs)
	}
	for _, step := range []config.Transform{{Op: config.OpDecimal, Unscaled: true}, {Op: config.OpDecimal, Scale: 8}} {
		if _, err := bothPathsOfFile(t, path, config.Output{Columns: []string{"dec18"}, Transforms: []config.Transform{step}}); err != nil {
			t.Fatal(err)
		}
	}
}
