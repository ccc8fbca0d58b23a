package colsrc

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/transform"
)

// Decoders.Apply (the page decoder's runs) against ApplyTo (arrow-go's arrays): for every
// transform, on every column type the page path reads, with nulls, NaN, ±Inf, integer
// extremes, and dictionary pages that overflow into PLAIN within a chunk, both write
// the same bytes, for all rows and for a selection; and a few transforms match values
// computed here with plain Go.

// pageCol is a column of the test file: its name, Arrow type and values by row.
type pageCol struct {
	name string
	typ  arrow.DataType
	vals []any
}

// pageTestCols makes rows values for each column type the page path reads. The first
// 300 rows take few distinct values (a dictionary holds them); the rest are mostly
// distinct, so the dictionary overflows and the chunk goes on in PLAIN.
func pageTestCols(rows int) []pageCol {
	rng := rand.New(rand.NewPCG(7, 11))
	type gen struct {
		name string
		typ  arrow.DataType
		f    func(k int) any // value for key k
	}
	floatOf := func(k int) float64 {
		switch k % 23 {
		case 1:
			return math.NaN()
		case 2:
			return math.Inf(1)
		case 3:
			return math.Inf(-1)
		case 4:
			return math.Copysign(0, -1)
		}
		return float64(k%2001-1000) / 7
	}
	intIn := func(lo, hi int64) func(int) any {
		return func(k int) any {
			switch k % 17 {
			case 1:
				return int(lo)
			case 2:
				return int(hi)
			}
			return int(lo + int64(uint64(k)*0x9e3779b97f4a7c15%uint64(hi-lo+1)))
		}
	}
	gens := []gen{
		{"i8", arrow.PrimitiveTypes.Int8, intIn(math.MinInt8, math.MaxInt8)},
		{"i16", arrow.PrimitiveTypes.Int16, intIn(math.MinInt16, math.MaxInt16)},
		{"i32", arrow.PrimitiveTypes.Int32, intIn(math.MinInt32, math.MaxInt32)},
		{"i64", arrow.PrimitiveTypes.Int64, func(k int) any {
			switch k % 13 {
			case 1:
				return math.MinInt64
			case 2:
				return math.MaxInt64
			}
			return int(uint64(k) * 0x9e3779b97f4a7c15)
		}},
		{"u8", arrow.PrimitiveTypes.Uint8, intIn(0, math.MaxUint8)},
		{"u16", arrow.PrimitiveTypes.Uint16, intIn(0, math.MaxUint16)},
		{"u32", arrow.PrimitiveTypes.Uint32, intIn(0, math.MaxUint32)},
		{"u64", arrow.PrimitiveTypes.Uint64, func(k int) any { return uint64(k) * 0x9e3779b97f4a7c15 }},
		{"b", arrow.FixedWidthTypes.Boolean, func(k int) any { return k%3 == 0 }},
		{"h", arrow.FixedWidthTypes.Float16, func(k int) any { return floatOf(k) / 10 }},
		{"f32", arrow.PrimitiveTypes.Float32, func(k int) any { return floatOf(k) }},
		{"f64", arrow.PrimitiveTypes.Float64, func(k int) any { return floatOf(k) * 1e10 }},
		{"s", arrow.BinaryTypes.String, func(k int) any { return fmt.Sprintf("v%08x", k*2654435761%1000003)[:1+k%7] }},
		{"bin", arrow.BinaryTypes.Binary, func(k int) any { return fmt.Sprintf("%d-\x00-%d", k, k*k) }},
	}
	cols := make([]pageCol, len(gens))
	for j, g := range gens {
		vals := make([]any, rows)
		for r := range vals {
			k := r
			if r < 300 {
				k = r % 8
			}
			switch {
			case rng.IntN(9) == 0:
				vals[r] = nil
			default:
				vals[r] = g.f(k + j)
			}
		}
		cols[j] = pageCol{g.name, g.typ, vals}
	}
	return cols
}

// writePageTestFile writes cols to a Parquet file in row groups of rgRows with props.
func writePageTestFile(t *testing.T, path string, cols []pageCol, rgRows int64, props ...parquet.WriterProperty) {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for j, c := range cols {
		fields[j] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
		arrs[j] = arrayOf(c.typ, c.vals)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(len(cols[0].vals)))
	defer rec.Release()
	testkit.WriteParquet(t, path, rec, testkit.Parquet{
		Props: append(props, parquet.WithMaxRowGroupLength(rgRows), parquet.WithDictionaryDefault(true)),
		Arrow: []pqarrow.WriterOption{pqarrow.WithStoreSchema()},
	})
}

// rowGroupInput is one row group of the test file as both paths take it.
type rowGroupInput struct {
	rows   int
	arrow  map[string]*arrow.Chunked
	chunks map[string]pages.Chunk
}

// readPageTestFile reads every row group of the file at path both ways, checking that
// the page decoder accepts every chunk.
func readPageTestFile(t *testing.T, path string, cols []pageCol) (map[string]arrow.Field, []rowGroupInput) {
	t.Helper()
	ds, err := dataset.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f := ds.Files[0]
	r, err := ds.OpenReader(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	names := make([]string, len(cols))
	fields := map[string]arrow.Field{}
	leaves := make([]dataset.Leaf, len(cols))
	for j, c := range cols {
		names[j] = c.name
		fields[c.name], _ = ds.Field(c.name)
		l, ok := f.Leaf(c.name)
		if !ok {
			t.Fatalf("no leaf %s", c.name)
		}
		leaves[j] = l
	}
	var out []rowGroupInput
	for _, rg := range ds.RowGroups {
		arrs, err := r.ReadRowGroup(context.Background(), rg.Index, names)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, err := r.ReadChunks(context.Background(), rg.Index, leaves, nil) // a buffer of its own: chunks view it
		if err != nil {
			t.Fatal(err)
		}
		in := rowGroupInput{rows: int(rg.Rows), arrow: map[string]*arrow.Chunked{}, chunks: map[string]pages.Chunk{}}
		for j, n := range names {
			if err := f.PagesReadable(rg.Index, leaves[j]); err != nil {
				t.Fatalf("row group %d, column %s: %v", rg.Index, n, err)
			}
			in.arrow[n], in.chunks[n] = arrs[j], chunks[j]
		}
		out = append(out, in)
	}
	return fields, out
}

// dataPageEncodings lists the value encodings of a chunk's data pages.
func dataPageEncodings(t *testing.T, data []byte) []pages.Encoding {
	var encs []pages.Encoding
	for pos := 0; pos < len(data); {
		h, err := pages.ParseHeader(data[pos:])
		if err != nil {
			t.Fatal(err)
		}
		if h.Type == pages.DataPage || h.Type == pages.DataPageV2 {
			encs = append(encs, h.Encoding)
		}
		pos += h.Size + h.Compressed
	}
	return encs
}

// longestPage is the most values a data page of the chunk holds.
func longestPage(t *testing.T, data []byte) int {
	n := 0
	for pos := 0; pos < len(data); {
		h, err := pages.ParseHeader(data[pos:])
		if err != nil {
			t.Fatal(err)
		}
		if h.Type == pages.DataPage || h.Type == pages.DataPageV2 {
			n = max(n, h.NumValues)
		}
		pos += h.Size + h.Compressed
	}
	return n
}

// bothPaths applies o to every row group both ways, for all rows and for selections, and
// fails unless the bytes are equal; it returns ApplyTo's bytes of all rows.
func bothPaths(t *testing.T, st *Decoders, o config.Output, names []string, fields map[string]arrow.Field, rgs []rowGroupInput) [][]byte {
	t.Helper()
	fs := make([]arrow.Field, len(names))
	for j, n := range names {
		fs[j] = fields[n]
	}
	out, err := transform.Compile(o, fs)
	if err != nil {
		t.Fatalf("%s: Compile: %v", o.Name, err)
	}
	all := make([][]byte, len(out.Tensors()))
	for _, rg := range rgs {
		cols := make([]*arrow.Chunked, len(names))
		chunks := make([]pages.Chunk, len(names))
		for j, n := range names {
			cols[j], chunks[j] = rg.arrow[n], rg.chunks[n]
			if !out.ReadsValues(j, Kind(out.ColumnType(j), chunks[j].Type, chunks[j].TypeLen)) {
				t.Fatalf("%s: column %s (%s) is not read from pages", o.Name, n, fields[n].Type)
			}
		}
		rng := rand.New(rand.NewPCG(uint64(rg.rows), 3))
		for _, sel := range [][]int32{nil, selection(rng, rg.rows, 2), selection(rng, rg.rows, 10), {int32(rg.rows - 1)}} {
			// Rows a few bytes more than a row apart, the gaps marked, as in serve's records.
			d1, d2 := transform.Dest{}, transform.Dest{}
			n := rg.rows
			if sel != nil {
				n = len(sel)
			}
			for i := range out.Tensors() {
				stride := rowBytes(out, i) + 3
				d1.Bufs = append(d1.Bufs, bytes.Repeat([]byte{0xa5}, n*stride))
				d2.Bufs = append(d2.Bufs, bytes.Repeat([]byte{0xa5}, n*stride))
				d1.Stride, d2.Stride = append(d1.Stride, stride), append(d2.Stride, stride)
			}
			if err := out.ApplyTo(cols, sel, d1); err != nil {
				t.Fatalf("%s: ApplyTo: %v", o.Name, err)
			}
			if err := st.Apply(out, chunks, nil, rg.rows, sel, d2); err != nil {
				t.Fatalf("%s: Decoders.Apply: %v", o.Name, err)
			}
			for i := range d1.Bufs {
				if k := firstDiff(d1.Bufs[i], d2.Bufs[i]); k >= 0 {
					t.Fatalf("%s, tensor %d, %d of %d rows selected: byte %d (row %d) is %#x from arrow-go, %#x from pages",
						o.Name, i, n, rg.rows, k, k/d1.Stride[i], d1.Bufs[i][k], d2.Bufs[i][k])
				}
				if sel == nil {
					for k := 0; k < len(d1.Bufs[i]); k += d1.Stride[i] {
						all[i] = append(all[i], d1.Bufs[i][k:k+rowBytes(out, i)]...)
					}
				}
			}
		}
	}
	return all
}

func firstDiff(a, b []byte) int {
	for k := range a {
		if a[k] != b[k] {
			return k
		}
	}
	return -1
}

// selection picks about one row in every of rows, ascending, the first and last always.
func selection(rng *rand.Rand, rows, every int) []int32 {
	sel := []int32{0}
	for r := 1; r < rows-1; r++ {
		if rng.IntN(every) == 0 {
			sel = append(sel, int32(r))
		}
	}
	return append(sel, int32(rows-1))
}

var allDTypes = []string{"bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
	"float16", "bfloat16", "float32", "float64"}

// pageTestOutputs is every transform on every column, alone and chained, and stacked.
func pageTestOutputs(cols []pageCol) []struct {
	o     config.Output
	names []string
} {
	type out = struct {
		o     config.Output
		names []string
	}
	var outs []out
	add := func(name string, names []string, ts ...config.Transform) {
		outs = append(outs, out{config.Output{Name: name, Transforms: ts}, names})
	}
	norm := func(n int) config.Transform {
		mean, std := make([]float64, n), make([]float64, n)
		for j := range n {
			mean[j], std[j] = float64(j)-2.5, 0.5+float64(j)
		}
		return config.Transform{Op: config.OpNormalize, Mean: mean, Std: std}
	}
	clip := func(lo, hi float64) config.Transform {
		return config.Transform{Op: config.OpClip, Min: &lo, Max: &hi}
	}
	bucketize := config.Transform{Op: config.OpBucketize, Boundaries: []float64{-1000, -1, 0, 0.5, 3, 1e6}}
	hash := config.Transform{Op: config.OpHashBucket, Buckets: 1000, HashSeed: 42}
	var nums, strs []string
	for _, c := range cols {
		n := []string{c.name}
		if c.typ.ID() == arrow.STRING || c.typ.ID() == arrow.BINARY {
			strs = append(strs, c.name)
			add(c.name+" hash", n, hash)
			add(c.name+" fill hash", n, config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Str: "", IsStr: true}},
				config.Transform{Op: config.OpHashBucket, Buckets: 7})
			continue
		}
		nums = append(nums, c.name)
		add(c.name, n)
		for _, d := range allDTypes {
			add(c.name+" cast "+d, n, cast(d))
		}
		add(c.name+" fill", n, fillNum(7))
		add(c.name+" normalize", n, norm(1))
		add(c.name+" clip", n, clip(-100, 100))
		add(c.name+" log1p", n, config.Transform{Op: config.OpLog1p})
		add(c.name+" bucketize", n, bucketize)
		add(c.name+" fill normalize clip", n, fillNum(3), norm(1), clip(-2, 2))
		add(c.name+" log1p bucketize to int8", n, config.Transform{Op: config.OpLog1p}, bucketize, cast("int8"))
		add(c.name+" cast int16 hash", n, cast("int16"), hash)
		if !slices.Contains([]arrow.Type{arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64}, c.typ.ID()) {
			add(c.name+" hash", n, hash)
			add(c.name+" fill hash", n, fillNum(5), hash)
		}
	}
	add("stacked", nums)
	add("stacked fill normalize clip", nums, fillNum(0), norm(len(nums)), clip(-3, 3))
	add("stacked float16", nums, cast("float16"))
	add("stacked strings hash", strs, hash)
	return outs
}

func TestPagesMatchArrow(t *testing.T) {
	cols := pageTestCols(2600)
	dir := t.TempDir()
	files := []struct {
		name   string
		rgRows int64
		props  []parquet.WriterProperty
		groups int  // row groups
		mixed  bool // chunks go from dictionary pages to PLAIN
	}{
		// Small pages, a dictionary that overflows within the first row group's chunks.
		{"small pages", 1500, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithDictionaryPageSizeLimit(1000), parquet.WithDataPageSize(512), parquet.WithBatchSize(64)}, 2, true},
		// Pages of thousands of rows, data page v2: runs are cut inside pages.
		{"large pages v2", 1 << 20, []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDictionaryPageSizeLimit(4000)}, 1, false},
	}
	var st Decoders // shared by every output and row group, as a worker's is
	for _, file := range files {
		t.Run(file.name, func(t *testing.T) {
			path := filepath.Join(dir, file.name+".parquet")
			writePageTestFile(t, path, cols, file.rgRows, file.props...)
			fields, rgs := readPageTestFile(t, path, cols)
			if len(rgs) != file.groups {
				t.Fatalf("%d row groups, want %d", len(rgs), file.groups)
			}
			if file.mixed {
				for _, n := range []string{"i32", "i64", "f64", "s", "bin"} {
					encs := dataPageEncodings(t, rgs[0].chunks[n].Data)
					if encs[0] != pages.RLEDictionary || encs[len(encs)-1] != pages.Plain {
						t.Fatalf("column %s: data pages %v, want dictionary-encoded, then PLAIN", n, encs)
					}
				}
			}
			if longest := longestPage(t, rgs[0].chunks["f32"].Data); (longest > blockValues) != (file.groups == 1) {
				t.Fatalf("the longest page of column f32 holds %d values", longest)
			}
			outs := pageTestOutputs(cols)
			if len(outs) < 200 {
				t.Fatalf("only %d outputs", len(outs))
			}
			for _, x := range outs {
				bothPaths(t, &st, x.o, x.names, fields, rgs)
			}
			checkByHand(t, &st, cols, fields, rgs)
		})
	}
}

// checkByHand checks a few transforms against values computed here from the column's
// values with plain Go math.
func checkByHand(t *testing.T, st *Decoders, cols []pageCol, fields map[string]arrow.Field, rgs []rowGroupInput) {
	t.Helper()
	byName := map[string][]any{}
	for _, c := range cols {
		byName[c.name] = c.vals
	}
	one := func(name string, dtype string, ts ...config.Transform) []byte {
		o := config.Output{Name: "x", DType: dtype, Transforms: ts}
		return bothPaths(t, st, o, []string{name}, fields, rgs)[0]
	}
	lo, hi := -2.0, 2.0

	// f64: fill_null(-3), normalize(1, 4), clip(-2, 2) as float64; NaN stays NaN.
	var want []float64
	for _, v := range byName["f64"] {
		x := -3.0
		if v != nil {
			x = v.(float64)
		}
		x = (x - 1) / 4
		if !math.IsNaN(x) {
			x = math.Max(lo, math.Min(hi, x))
		}
		want = append(want, x)
	}
	got := one("f64", "float64", fillNum(-3), config.Transform{Op: config.OpNormalize, Mean: []float64{1}, Std: []float64{4}},
		config.Transform{Op: config.OpClip, Min: &lo, Max: &hi})
	testkit.SameFloats(t, "f64 fill normalize clip", testkit.F64s(got), want)

	// f32: log1p as float64; a null is NaN.
	want = want[:0]
	for _, v := range byName["f32"] {
		x := math.NaN()
		if v != nil {
			x = math.Log1p(float64(float32(v.(float64))))
		}
		want = append(want, x)
	}
	testkit.SameFloats(t, "f32 log1p", testkit.F64s(one("f32", "float64", config.Transform{Op: config.OpLog1p})), want)

	// i32: bucketize, as int64: the count of boundaries at or below x; a null is 0.
	bounds := []float64{-1e9, -5, 0, 1e6, 2e9}
	var wantI []int64
	for _, v := range byName["i32"] {
		n := int64(0)
		if v != nil {
			for _, b := range bounds {
				if b <= float64(v.(int)) {
					n++
				}
			}
		}
		wantI = append(wantI, n)
	}
	testkit.SameInts(t, "i32 bucketize", testkit.Int64s(one("i32", "", config.Transform{Op: config.OpBucketize, Boundaries: bounds})), wantI)

	// i32 cast to int8 wraps: the low byte.
	wantI = wantI[:0]
	for _, v := range byName["i32"] {
		n := int64(0)
		if v != nil {
			n = int64(int8(v.(int)))
		}
		wantI = append(wantI, n)
	}
	b := one("i32", "", cast("int8"))
	gotI := make([]int64, len(b))
	for k, x := range b {
		gotI[k] = int64(int8(x))
	}
	testkit.SameInts(t, "i32 cast int8", gotI, wantI)

	// s: fill_null("none"), hash_bucket(1000, seed 9): FNV-1a-64 of the seed's 8 bytes,
	// little-endian, then the string's bytes, mod 1000.
	wantI = wantI[:0]
	for _, v := range byName["s"] {
		s := "none"
		if v != nil {
			s = v.(string)
		}
		h := fnv.New64a()
		h.Write(binary.LittleEndian.AppendUint64(nil, 9))
		h.Write([]byte(s))
		wantI = append(wantI, int64(h.Sum64()%1000))
	}
	got = one("s", "", config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Str: "none", IsStr: true}},
		config.Transform{Op: config.OpHashBucket, Buckets: 1000, HashSeed: 9})
	testkit.SameInts(t, "s fill hash", testkit.Int64s(got), wantI)

	// u16: hash_bucket(97) of the value as an int64, 8 bytes little-endian; null is 0.
	wantI = wantI[:0]
	for _, v := range byName["u16"] {
		n := int64(0)
		if v != nil {
			h := fnv.New64a()
			h.Write(make([]byte, 8)) // seed 0
			h.Write(binary.LittleEndian.AppendUint64(nil, uint64(v.(int))))
			n = int64(h.Sum64() % 97)
		}
		wantI = append(wantI, n)
	}
	testkit.SameInts(t, "u16 hash", testkit.Int64s(one("u16", "", config.Transform{Op: config.OpHashBucket, Buckets: 97})), wantI)
}
