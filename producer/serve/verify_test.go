package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/dataset/pqdamage"
	"github.com/shmloader/shmloader/producer/gen"
)

// verifyData writes a small gen dataset into a directory of its own: 2 files of 2,000
// rows in row groups of 1,000, features f000..f005, categoricals c00..c02 and s00, seq.
func verifyData(t *testing.T, rows int64, rgRows int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := gen.Write(context.Background(), gen.Config{Out: dir, Rows: rows, Files: 2, RowGroupRows: rgRows,
		Compression: "snappy", Features: 6, Categoricals: 3, Strings: 1, ListMax: 4, NullFraction: 0.1, Seed: 5}, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// damage is one damaged page and what a report must say of it.
type damage struct {
	file   string // in the dataset's directory
	rg     int
	column string // as the report names it
	leaf   string // the page's leaf in the schema
	page   int
	part   pqdamage.Part
}

func (d damage) apply(t *testing.T, dir string) string {
	t.Helper()
	w, err := pqdamage.Page(filepath.Join(dir, d.file), d.rg, d.leaf, d.page, d.part)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("page %d (chunk offset %d)", d.page, w.Offset-w.ChunkStart)
}

func verifyRun(t *testing.T, v *Verifier, workers int) *VerifyReport {
	t.Helper()
	rep, err := v.Run(context.Background(), workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// wantDamaged checks that the report names exactly these chunks, in this order, each
// with its file, row group, column and page, as ErrCorrupt.
func wantDamaged(t *testing.T, dir string, got []*dataset.Error, want []damage, pages []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d damaged chunks reported, want %d:\n%v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Path != filepath.Join(dir, w.file) || e.RowGroup != w.rg || e.Column != w.column ||
			!strings.Contains(e.Error(), pages[i]) || !errors.Is(e, dataset.ErrCorrupt) {
			t.Errorf("damaged chunk %d: %v\nwant %s, row group %d, column %q, %s", i, e, w.file, w.rg, w.column, pages[i])
		}
	}
}

// Every damaged column chunk is reported, not only the first, in the order of file, row
// group and column, whatever the number of workers: pages damaged in two files, two of
// them in one row group and one stacked output (whose page path stops at the first), one
// in a list column (read through arrow-go, whose page the checks name by its leaf). Gen
// files carry a checksum per chunk, which only says a chunk is damaged: the report
// names the page as well.
func TestVerifyReportsEveryDamagedChunk(t *testing.T) {
	dir := verifyData(t, 4000, 1000)
	verifyEveryDamaged(t, dir, []damage{
		{file: "part-00000.parquet", rg: 1, column: "f001", leaf: "f001", page: 0, part: pqdamage.Header},
		{file: "part-00000.parquet", rg: 1, column: "f004", leaf: "f004", page: 0, part: pqdamage.Body},
		{file: "part-00001.parquet", rg: 0, column: "c01", leaf: "c01", page: 0, part: pqdamage.Body},
		{file: "part-00001.parquet", rg: 1, column: "seq", leaf: "seq.list.element", page: 1, part: pqdamage.Header},
	}, `
outputs:
  x: {columns: [f000..f005], transforms: [{fill_null: 0}]}
  c: {columns: [c00..c02], transforms: [{hash_bucket: 100}]}
  seq: {columns: seq, transforms: [{pad: {length: 4, value: -1}}]}
`)
}

// The same for files without checksums (of other writers), where only the page checks
// find damage, and a column that only the filter reads.
func TestVerifyReportsEveryDamagedChunkWithoutChecksums(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"a.parquet", "b.parquet"} {
		writeDecoderTestFile(t, filepath.Join(dir, name), i, parquet.WithCompression(compress.Codecs.Snappy))
	}
	verifyEveryDamaged(t, dir, []damage{
		{file: "a.parquet", rg: 1, column: "i32", leaf: "i32", page: 2, part: pqdamage.Body},
		{file: "a.parquet", rg: 1, column: "f64", leaf: "f64", page: 3, part: pqdamage.Header},
		{file: "b.parquet", rg: 0, column: "s", leaf: "s", page: 1, part: pqdamage.Body},
		{file: "b.parquet", rg: 2, column: "u16", leaf: "u16", page: 2, part: pqdamage.Header},
	}, `
outputs:
  nums: {columns: [i32, f64], dtype: float64, transforms: [{fill_null: 0}]}
  s: {columns: s, transforms: [{fill_null: ""}, {hash_bucket: 10}]}
  id: id
filter: [{column: u16, op: ">=", value: 0}]
`)
}

// verifyEveryDamaged damages the pages of want in the dataset in dir, and checks that
// they are reported, without a config (every column) and with one whose outputs and
// filter are outputs (the columns of want, read by serve's own roads), by 1 worker and
// by 4 alike.
func verifyEveryDamaged(t *testing.T, dir string, want []damage, outputs string) {
	t.Helper()
	var pages []string
	for _, d := range want {
		p := d.apply(t, dir)
		if d.leaf != d.column {
			p = "leaf " + d.leaf + ": " + p
		}
		pages = append(pages, p)
	}
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	every, err := NewVerifier(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("dataset: "+dir+"\n"+outputs), "verify.yaml")
	if err != nil {
		t.Fatal(err)
	}
	asServed, err := VerifyConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]*Verifier{"every column": every, "config": asServed} {
		one := verifyRun(t, v, 1)
		wantDamaged(t, dir, one.Damaged, want, pages)
		four := verifyRun(t, v, 4)
		if fmt.Sprint(one) != fmt.Sprint(four) {
			t.Errorf("%s: 1 worker and 4 report differently:\n%v\n%v", name, one, four)
		}
		rgs := len(v.Dataset().RowGroups)
		if one.RowGroups != rgs || one.Chunks != int64(rgs*len(v.Columns())) {
			t.Errorf("%s: %d row groups and %d chunks checked, want %d and %d", name, one.RowGroups, one.Chunks, rgs, rgs*len(v.Columns()))
		}
	}
}

// With a config, only the columns its outputs and filter read are read: damage in
// another is not reported, and the bytes checked are those of the columns read; damage
// in a column only the filter reads is.
func TestVerifyReadsOnlyTheConfigsColumns(t *testing.T) {
	dir := verifyData(t, 4000, 1000)
	filterOnly := damage{file: "part-00001.parquet", rg: 1, column: "c02", leaf: "c02", page: 1, part: pqdamage.Header}
	page := filterOnly.apply(t, dir)
	damage{file: "part-00000.parquet", rg: 0, leaf: "f005", page: 0, part: pqdamage.Header}.apply(t, dir)
	damage{file: "part-00001.parquet", rg: 0, leaf: "s00", page: 0, part: pqdamage.Body}.apply(t, dir)
	cfg, err := config.Parse(fmt.Appendf(nil, `
dataset: %s
outputs:
  x: {columns: [f000..f003], transforms: [{fill_null: 0}]}
  id: id
filter: [{column: c02, op: ">=", value: 0}]
`, dir), "verify.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := VerifyConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v.Columns(), " "); got != "id f000 f001 f002 f003 c02" {
		t.Fatalf("columns checked: %s", got)
	}
	rep := verifyRun(t, v, 2)
	wantDamaged(t, dir, rep.Damaged, []damage{filterOnly}, []string{page})
	var bytes int64
	for _, rg := range v.Dataset().RowGroups {
		meta, _ := rg.File.Footer()
		for _, c := range v.Columns() {
			l, _ := rg.File.Leaf(c)
			bytes += meta.RowGroups[rg.Index].Columns[l.Index].MetaData.TotalCompressedSize
		}
	}
	if rep.Bytes != bytes || rep.Chunks != 4*6 {
		t.Errorf("checked %d chunks, %d bytes; the config's columns have 24 and %d", rep.Chunks, rep.Bytes, bytes)
	}
}

// A clean dataset: nothing damaged, every chunk of every row group checked, and the
// pages counted are those in the files.
func TestVerifyCleanDataset(t *testing.T) {
	dir := verifyData(t, 4000, 1000)
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := verifyRun(t, v, 3)
	var bytes int64
	for _, rg := range ds.RowGroups {
		bytes += rg.CompressedBytes
	}
	if len(rep.Damaged) != 0 || rep.RowGroups != 4 || rep.Bytes != bytes || rep.Pages < rep.Chunks {
		t.Errorf("clean dataset: %+v; want nothing damaged, 4 row groups, %d bytes", rep, bytes)
	}
	if rep.Uncovered != 0 {
		t.Errorf("%d pages counted as covered by no CRC in `shmloader gen` files, whose footers checksum every chunk", rep.Uncovered)
	}
}

// A cancelled run stops within a column chunk and returns what it found.
func TestVerifyStopsWhenCancelled(t *testing.T) {
	dir := verifyData(t, 100000, 500)
	damage{file: "part-00000.parquet", rg: 0, column: "f000", leaf: "f000", page: 0, part: pqdamage.Header}.apply(t, dir)
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var p VerifyProgress
	cancelled := make(chan time.Time, 1)
	go func() {
		for p.RowGroups.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		cancelled <- time.Now()
		cancel()
	}()
	rep, err := v.Run(ctx, 1, &p)
	if !errors.Is(err, context.Canceled) || rep.RowGroups >= len(ds.RowGroups) {
		t.Fatalf("cancelled after 2 of %d row groups: %d checked, %v", len(ds.RowGroups), rep.RowGroups, err)
	}
	if took := time.Since(<-cancelled); took > time.Second {
		t.Errorf("Run returned %v after it was cancelled", took)
	}
	if len(rep.Damaged) != 1 || !regexp.MustCompile(`part-00000.parquet: row group 0: column "f000": page 0`).MatchString(rep.Damaged[0].Error()) {
		t.Errorf("what was found before the stop: %v", rep.Damaged)
	}
}

// A file that cannot be read any more is reported once, not once per row group, and the
// other files are still checked.
func TestVerifyReportsAnUnreadableFileOnce(t *testing.T) {
	dir := verifyData(t, 4000, 500)
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "part-00000.parquet")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := verifyRun(t, v, 3)
	if len(rep.Damaged) != 1 || rep.Damaged[0].Path != gone || rep.Damaged[0].Column != "" || !errors.Is(rep.Damaged[0], fs.ErrNotExist) {
		t.Errorf("a removed file: %v", rep.Damaged)
	}
	if want := int64(4 * len(v.Columns())); rep.Chunks != want || rep.RowGroups != 4 {
		t.Errorf("%d chunks of %d row groups checked, want the other file's %d of 4", rep.Chunks, rep.RowGroups, want)
	}
}

// An INT96 timestamp out of the range arrow-go reads passes every page check (its bytes
// are a well-formed value), but serve's page path refuses it as arrow-go does: with a
// config whose output reads it from pages, the run narrows that output's failure down
// to its column through arrow-go; without a config, arrow-go's road finds it.
func TestVerifyFindsAValueServeRefuses(t *testing.T) {
	dir := t.TempDir()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ns}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range 1000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 3_600_000_000_000))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := testkit.WriteParquet(t, filepath.Join(dir, "ts.parquet"), rec, testkit.Parquet{
		Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(500), parquet.WithDictionaryDefault(false)},
		Arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)},
	})
	if _, err := pqdamage.Page(path, 1, "ts", 0, pqdamage.Last); err != nil { // the last value's julian day
		t.Fatal(err)
	}
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	every, err := NewVerifier(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("dataset: "+dir+"\noutputs:\n  id: id\n  hour: {columns: ts, transforms: [{datetime: hour}]}\n"), "verify.yaml")
	if err != nil {
		t.Fatal(err)
	}
	asServed, err := VerifyConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plan := asServed.src.cols.NewWorker().Plan(ds.RowGroups[1]); plan[1] == nil {
		t.Fatal("the INT96 output is not read from pages: the test would not reach the page path's value check")
	}
	for name, v := range map[string]*Verifier{"every column": every, "config": asServed} {
		rep := verifyRun(t, v, 2)
		if len(rep.Damaged) != 1 || rep.Damaged[0].RowGroup != 1 || rep.Damaged[0].Column != "ts" || !strings.Contains(rep.Damaged[0].Error(), "INT96") {
			t.Errorf("%s: %v, want row group 1, column ts, its INT96 value", name, rep.Damaged)
		}
	}
}

// Every page of a file with neither page CRCs nor chunk checksums is counted as covered
// by no CRC (TestVerifyCleanDataset: none of a `shmloader gen` file).
func TestVerifyCountsThePagesNoCRCCovers(t *testing.T) {
	dir := t.TempDir()
	writeDecoderTestFile(t, filepath.Join(dir, "a.parquet"), 0, parquet.WithCompression(compress.Codecs.Snappy))
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := verifyRun(t, v, 2)
	if len(rep.Damaged) != 0 || rep.Pages == 0 || rep.Uncovered != rep.Pages {
		t.Errorf("%d damaged, %d pages, %d uncovered; want every page uncovered", len(rep.Damaged), rep.Pages, rep.Uncovered)
	}
}
