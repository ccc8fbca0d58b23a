package serve

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
)

// The page path and the array path serve the same bytes: a config served as it is
// (outputs of flat columns straight from pages) and with SHMLOADER_DECODER=arrow (every
// output through Arrow arrays, flat columns decoded into them by the same page decoder,
// then ApplyTo) gives identical batches on every rank; and both decode what arrow-go's
// arrays give (decodeAll's viaArrowGo).

// pagePlanned lists the outputs of cfg that serve reads from pages in the dataset's
// first row group under the current SHMLOADER_DECODER.
func pagePlanned(t *testing.T, cfg *config.Config) []string {
	t.Helper()
	ds, err := dataset.Open(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSource(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for o, ls := range s.cols.NewWorker().Plan(ds.RowGroups[0]) {
		if ls != nil {
			names = append(names, s.outputs[o].Name())
		}
	}
	return names
}

// sameStreams serves cfg() with the page path and with the array path only, and fails
// unless every rank's batches are byte-identical, and unless both roads decode every row
// group as arrow-go's arrays do; wantPages are the outputs the page path must read from
// pages.
func sameStreams(t *testing.T, cfg func() *config.Config, wantPages []string) {
	t.Helper()
	ds, err := dataset.Open(cfg().Dataset)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := decodeAll(t, ds, cfg(), viaArrowGo)
	for _, road := range []string{viaPages, viaArrays} {
		got, _ := decodeAll(t, ds, cfg(), road)
		sameDecoded(t, road, got, ref)
	}
	if got := pagePlanned(t, cfg()); !slices.Equal(got, wantPages) {
		t.Fatalf("outputs read from pages: %v, want %v", got, wantPages)
	}
	viaPages := serveAndRead(t, cfg(), Options{}, nil)
	t.Setenv("SHMLOADER_DECODER", "arrow")
	if got := pagePlanned(t, cfg()); len(got) != 0 {
		t.Fatalf("SHMLOADER_DECODER=arrow still reads %v from pages", got)
	}
	viaArrow := serveAndRead(t, cfg(), Options{}, nil)
	for r := range viaPages {
		a, b := viaPages[r].hashes, viaArrow[r].hashes
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("rank %d: %d batches from pages, %d from arrays", r, len(a), len(b))
		}
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("rank %d: batch %d is %s from pages, %s from arrays", r, k, a[k], b[k])
			}
		}
	}
}

// The shared dataset (every column kind, snappy, nulls) under testConfig, one epoch.
func TestDecodersServeSameBytes(t *testing.T) {
	sameStreams(t, func() *config.Config {
		cfg := testConfig(t)
		cfg.Epochs = 1
		return cfg
	}, []string{"id", "features", "cats", "strs", "label"})
}

// A dataset written for the page decoder's hard cases: small pages, dictionaries that
// overflow into PLAIN within a chunk, data pages v1 (snappy) and v2 (zstd), NaN, ±Inf,
// float16, bool, unsigned ints and strings with nulls; served through a filter, so that
// only some rows of each row group are selected.
func TestDecodersServeSameBytesFiltered(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeDecoderTestFile(t, filepath.Join(dir, "a.parquet"), 0, parquet.WithCompression(compress.Codecs.Snappy))
	writeDecoderTestFile(t, filepath.Join(dir, "b.parquet"), 1, parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDataPageVersion(parquet.DataPageV2))
	yaml := fmt.Sprintf(`
dataset: %s
batch_size: 64
seed: 5
epochs: 1
ranks: 2
ring_depth: 4
progress: 0s
shuffle: {row_groups: true, window: 2}
filter:
  - {column: i32, op: not_null}
  - {column: u16, op: ">=", value: 3000}
outputs:
  id: {columns: id}
  nums:
    columns: [i32, u16, f64, h, b]
    transforms: [{fill_null: 1}, {normalize: {mean: 0.5, std: 3}}, {clip: {min: -10, max: 10}}]
  raw: {columns: [f64, h, i32], dtype: float64}
  logs: {columns: f64, dtype: bfloat16, transforms: [log1p, {bucketize: [-1, 0, 1, 5]}, {cast: float16}]}
  narrow: {columns: i32, transforms: [{cast: int8}]}
  strs: {columns: s, transforms: [{fill_null: "?"}, {hash_bucket: {buckets: 1000, seed: 3}}]}
`, dir)
	cfg := func() *config.Config {
		c, err := config.Parse([]byte(yaml), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sameStreams(t, cfg, []string{"id", "nums", "raw", "logs", "narrow", "strs"})
}

// writeDecoderTestFile writes 2400 rows in row groups of 800: id, i32, u16, f64, h
// (float16), b and s, all but id with nulls. Each row group starts with 200 rows of few
// distinct values, then every value is new, so that its dictionary overflows.
func writeDecoderTestFile(t *testing.T, path string, file int, props ...parquet.WriterProperty) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const rows, rgRows = 2400, 800
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for r := range rows {
		k := r
		if r%rgRows < 200 {
			k = r % 5
		}
		h := uint64(k)*0x9e3779b97f4a7c15 + uint64(file)
		null := func(fb array.Builder, salt uint64) bool {
			if (uint64(r)*2654435761+salt)%11 == 0 {
				fb.AppendNull()
				return true
			}
			return false
		}
		b.Field(0).(*array.Int64Builder).Append(int64(file*rows + r))
		if i := b.Field(1).(*array.Int32Builder); !null(i, 1) {
			i.Append(int32(h >> 32))
		}
		if u := b.Field(2).(*array.Uint16Builder); !null(u, 2) {
			u.Append(uint16(h >> 16))
		}
		f := float64(int64(h>>12)%100000) / 64
		switch k % 29 {
		case 1:
			f = math.NaN()
		case 2:
			f = math.Inf(1)
		case 3:
			f = math.Inf(-1)
		}
		if fb := b.Field(3).(*array.Float64Builder); !null(fb, 3) {
			fb.Append(f)
		}
		if hb := b.Field(4).(*array.Float16Builder); !null(hb, 4) {
			hb.Append(float16.New(float32(f / 8)))
		}
		if bb := b.Field(5).(*array.BooleanBuilder); !null(bb, 5) {
			bb.Append(h&4 != 0)
		}
		if sb := b.Field(6).(*array.StringBuilder); !null(sb, 6) {
			sb.Append(fmt.Sprintf("s%x", h%100003))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	testkit.WriteParquet(t, path, rec, testkit.Parquet{Props: append(props, parquet.WithMaxRowGroupLength(rgRows), parquet.WithDictionaryDefault(true),
		parquet.WithDictionaryPageSizeLimit(800), parquet.WithDataPageSize(512), parquet.WithBatchSize(64))})
}
