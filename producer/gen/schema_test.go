package gen

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func TestSchema(t *testing.T) {
	c := small(t.TempDir())
	d := write(t, c)
	want := "id f000 f001 f002 f003 f004 f005 f006 f007 f008 c00 c01 c02 c03 c04 s00 s01 seq label"
	if got := strings.Join(d.ColumnNames(), " "); got != want {
		t.Fatalf("columns\n got %s\nwant %s", got, want)
	}
	types := map[string]string{"id": "int64", "f003": "float32", "c04": "int64", "s01": "utf8", "label": "float32"}
	for name, typ := range types {
		if f, _ := d.Field(name); f.Type.String() != typ {
			t.Errorf("%s is %s, want %s", name, f.Type, typ)
		}
	}
	if f, _ := d.Field("seq"); f.Type.ID() != arrow.LIST || f.Type.(*arrow.ListType).Elem().ID() != arrow.INT64 {
		t.Errorf("seq is %s", f.Type)
	}
	nullable := map[string]bool{"id": false, "f000": true, "f001": false, "f004": true, "c00": false, "c02": true, "s00": true, "seq": true, "label": false}
	for name, want := range nullable {
		if f, _ := d.Field(name); f.Nullable != want {
			t.Errorf("%s nullable = %v, want %v", name, f.Nullable, want)
		}
	}
	if d.Rows != c.Rows || len(d.Files) != c.Files || len(d.RowGroups) != 3*3 { // 1000 rows a file: 400+400+200
		t.Errorf("%d rows, %d files, %d row groups", d.Rows, len(d.Files), len(d.RowGroups))
	}
	if v := footerOf(t, d.Files[0]).KeyValueMetadata().FindValue(GenKey); v == nil || !strings.Contains(*v, "seed=7") {
		t.Errorf("footer %s = %v", GenKey, v)
	}
}

func TestDistributions(t *testing.T) {
	c := small(t.TempDir())
	c.Rows, c.Files, c.RowGroupRows, c.NullFraction = 20000, 2, 5000, 0.2
	cols := readColumns(t, write(t, c))
	frac := func(name string) float64 { return float64(cols[name].NullN()) / float64(c.Rows) }
	for _, name := range []string{"f000", "f004", "f008", "c02", "s00", "s01", "seq"} {
		if f := frac(name); f < 0.18 || f > 0.22 {
			t.Errorf("%s: %.3f nulls, want about 0.2", name, f)
		}
	}
	for _, name := range []string{"id", "f001", "f002", "c00", "c01", "label"} {
		if n := cols[name].NullN(); n != 0 {
			t.Errorf("%s: %d nulls, want none", name, n)
		}
	}
	empty, labels := 0, 0.0
	s := cols["s00"].(*array.String)
	for i := 0; i < s.Len(); i++ {
		if s.IsValid(i) && s.Value(i) == "" {
			empty++
		}
	}
	if empty == 0 || int64(empty) > c.Rows/20 {
		t.Errorf("s00 has %d empty strings", empty)
	}
	for _, v := range cols["label"].(*array.Float32).Float32Values() {
		if v != 0 && v != 1 {
			t.Fatalf("label %v", v)
		}
		labels += float64(v)
	}
	if r := labels / float64(c.Rows); r < 0.1 || r > 0.4 {
		t.Errorf("%.3f of labels are 1", r)
	}
	seq := cols["seq"].(*array.List)
	for i := 0; i < seq.Len(); i++ {
		if lo, hi := seq.ValueOffsets(i); hi-lo > int64(c.ListMax) {
			t.Fatalf("list of %d items", hi-lo)
		}
	}
	// Features differ in mean, so normalizing them means something.
	m0, m1 := mean(cols["f001"]), mean(cols["f002"])
	if m0 == m1 {
		t.Errorf("f001 and f002 have the same mean %v", m0)
	}
}

func mean(a arrow.Array) float64 {
	sum := 0.0
	for _, v := range a.(*array.Float32).Float32Values() {
		sum += float64(v)
	}
	return sum / float64(a.Len())
}

func TestOutputDirectory(t *testing.T) {
	dir := t.TempDir()
	c := small(dir)
	os.WriteFile(filepath.Join(dir, "README"), []byte("keep"), 0o644)
	if err := Write(context.Background(), c, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("non-empty directory: %v", err)
	}
	for _, name := range []string{"part-00099.parquet", ".part-00001.parquet.123.tmp"} {
		os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o644)
	}
	c.Overwrite = true
	write(t, c)
	for _, name := range []string{"part-00099.parquet", ".part-00001.parquet.123.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of an earlier run survived --overwrite: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README")); err != nil {
		t.Errorf("a file that is not Parquet was removed: %v", err)
	}

	// Cancelled: no file, and no temporary file, is left.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	if err := Write(ctx, small(out), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("cancelled run left %d entries, e.g. %s", len(ents), ents[0].Name())
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Out = "" },
		func(c *Config) { c.Rows = -1 },
		func(c *Config) { c.Files = 4000 },
		func(c *Config) { c.Features = 1001 },
		func(c *Config) { c.Categoricals = -1 },
		func(c *Config) { c.NullFraction = 1.5 },
		func(c *Config) { c.ListMax = -2 },
	}
	for i, mod := range bad {
		c := small(t.TempDir())
		mod(&c)
		if err := Write(context.Background(), c, nil); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}
