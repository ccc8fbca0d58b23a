package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestOpenListsSortedFiles(t *testing.T) {
	dir := t.TempDir()
	writeTest(t, dir, "b.parquet", 100, 50, writeOpts{rgRows: 20})
	writeTest(t, dir, "a.parquet", 0, 100, writeOpts{rgRows: 30})
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub.parquet"), 0o755) // a directory, never a file
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")

	for _, pattern := range []string{dir, filepath.Join(dir, "*.parquet"), filepath.Join(dir, "?.parquet")} {
		d, err := Open(pattern)
		if err != nil {
			t.Fatalf("Open(%s): %v", pattern, err)
		}
		if len(d.Files) != 2 || d.Files[0].Path != a || d.Files[1].Path != b || d.Files[1].Index != 1 {
			t.Fatalf("Open(%s): files %v", pattern, d.Files)
		}
		if d.Rows != 150 || len(d.RowGroups) != 4+3 {
			t.Fatalf("Open(%s): %d rows, %d row groups", pattern, d.Rows, len(d.RowGroups))
		}
		for i, rg := range d.RowGroups {
			if rg.Global != i || rg.CompressedBytes <= 0 || rg.UncompressedBytes <= 0 {
				t.Fatalf("row group %d: %+v", i, rg)
			}
		}
		if g := d.RowGroups[4]; g.File != d.Files[1] || g.Index != 0 || g.Rows != 20 {
			t.Fatalf("first row group of b: %+v", g)
		}
	}
	d, err := Open(b)
	if err != nil || len(d.Files) != 1 || d.Rows != 50 {
		t.Fatalf("Open(file): %v, %v", d, err)
	}
	if got := strings.Join(d.ColumnNames(), ","); got != "a,b,s,l" {
		t.Fatalf("ColumnNames = %s", got)
	}
	if f, ok := d.Field("b"); !ok || f.Type.ID() != arrow.FLOAT32 || !f.Nullable {
		t.Fatalf("Field(b) = %v, %v", f, ok)
	}
	if _, ok := d.Field("nope"); ok {
		t.Fatal("Field(nope) found")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeTest(t, dir, "good.parquet", 0, 100, writeOpts{rgRows: 50})
	data, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.parquet")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	garbage := filepath.Join(dir, "garbage.parquet")
	bad := append([]byte(nil), data...)
	for i := len(bad) - 300; i < len(bad)-8; i++ { // scramble the footer, keep its length and magic
		bad[i] ^= 0x5a
	}
	os.WriteFile(garbage, bad, 0o644)
	empty := writeTest(t, dir, "empty.parquet", 0, 0, writeOpts{})

	cases := []struct {
		pattern string
		want    error
		mention string
	}{
		{filepath.Join(dir, "missing.parquet"), fs.ErrNotExist, "missing.parquet"},
		{filepath.Join(dir, "none-*.parquet"), ErrNoFiles, "none-*.parquet"},
		{t.TempDir(), ErrNoFiles, ""},
		{trunc, ErrCorrupt, "trunc.parquet"},
		{garbage, ErrCorrupt, "garbage.parquet"},
		{empty, ErrNoRows, "empty.parquet"},
		{"", ErrNoFiles, ""},
	}
	for _, c := range cases {
		_, err := Open(c.pattern)
		var de *Error
		if !errors.Is(err, c.want) || !errors.As(err, &de) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("Open(%s) = %v, want %v mentioning %q", c.pattern, err, c.want, c.mention)
		}
	}
}

func TestOpenSchemaMismatch(t *testing.T) {
	mem := memory.DefaultAllocator
	write := func(dir, name string, fields []arrow.Field) {
		arrs := make([]arrow.Array, len(fields))
		for i, f := range fields {
			b := array.NewBuilder(mem, f.Type)
			b.AppendEmptyValues(3)
			arrs[i] = b.NewArray()
			b.Release()
		}
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, 3)
		writeRecord(t, filepath.Join(dir, name), rec, writeOpts{})
		rec.Release()
	}
	base := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "f007", Type: arrow.PrimitiveTypes.Float32}}
	cases := []struct {
		name   string
		fields []arrow.Field
		want   []string
	}{
		{"type", []arrow.Field{base[0], {Name: "f007", Type: arrow.PrimitiveTypes.Float64}},
			[]string{`part-00001.parquet: column "f007": is float64, but `, `part-00000.parquet has float32`}},
		{"missing", base[:1], []string{`part-00001.parquet: column "f007": missing, but `, `part-00000.parquet has it (float32)`}},
		{"extra", append(append([]arrow.Field(nil), base...), arrow.Field{Name: "x", Type: arrow.BinaryTypes.String}),
			[]string{`part-00001.parquet: column "x": is utf8, but `, `part-00000.parquet has no such column`}},
	}
	for _, c := range cases {
		dir := t.TempDir()
		write(dir, "part-00000.parquet", base)
		write(dir, "part-00001.parquet", c.fields)
		_, err := Open(dir)
		if !errors.Is(err, ErrSchema) {
			t.Fatalf("%s: %v, want ErrSchema", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", c.name, err, w)
			}
		}
	}

	// Same types, only nullability differs: accepted, and the column is nullable.
	dir := t.TempDir()
	write(dir, "part-00000.parquet", base)
	write(dir, "part-00001.parquet", []arrow.Field{base[0], {Name: "f007", Type: arrow.PrimitiveTypes.Float32, Nullable: true}})
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := d.Field("f007"); !f.Nullable {
		t.Fatal("f007 should be nullable when any file has it nullable")
	}
}

func TestFingerprint(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	writeTest(t, dir, "a.parquet", 0, 100, writeOpts{})
	writeTest(t, other, "a.parquet", 0, 100, writeOpts{})
	d1, _ := Open(dir)
	d2, _ := Open(dir)
	d3, _ := Open(other) // same bytes elsewhere
	if d1.Fingerprint() != d2.Fingerprint() || d1.Fingerprint() != d3.Fingerprint() {
		t.Fatal("fingerprint of the same files differs")
	}
	writeTest(t, dir, "a.parquet", 1, 100, writeOpts{}) // same shape, other values
	d4, _ := Open(dir)
	if d4.Fingerprint() == d1.Fingerprint() {
		t.Fatal("fingerprint did not change with the data")
	}
	os.Rename(filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet"))
	d5, _ := Open(dir)
	if d5.Fingerprint() == d4.Fingerprint() {
		t.Fatal("fingerprint did not change with the file name")
	}
}

// TestIdentityIgnoresHowThePathIsSpelled: the cache keys entries by Identity, so the same
// file named through a symbolic link or a relative path must get the same one (and a
// copy of the file, another).
func TestIdentityIgnoresHowThePathIsSpelled(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data")
	os.Mkdir(dir, 0o755)
	writeTest(t, dir, "a.parquet", 0, 40, writeOpts{rgRows: 20})
	link := filepath.Join(root, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	ids := map[string]string{}
	for _, pattern := range []string{dir, link, "data", "link/a.parquet"} {
		d, err := Open(pattern)
		if err != nil {
			t.Fatalf("Open(%s): %v", pattern, err)
		}
		ids[pattern] = d.Files[0].Identity()
	}
	for p, id := range ids {
		if id != ids[dir] {
			t.Errorf("Identity through %q differs from through %q:\n%q\n%q", p, dir, id, ids[dir])
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "a.parquet"))
	os.Mkdir(filepath.Join(root, "copy"), 0o755)
	os.WriteFile(filepath.Join(root, "copy", "a.parquet"), b, 0o644)
	d, err := Open(filepath.Join(root, "copy"))
	if err != nil || d.Files[0].Identity() == ids[dir] {
		t.Fatalf("a copy of the file has the same identity (%v)", err)
	}
}

// TestOpenRelativeNotFound: a relative pattern that finds nothing names the current
// directory it was resolved against and the absolute path it tried.
func TestOpenRelativeNotFound(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	os.Mkdir("empty", 0o755)
	for _, c := range []struct {
		pattern string
		want    error
	}{
		{"data/x", fs.ErrNotExist},
		{"data/x/*.parquet", ErrNoFiles},
		{"empty", ErrNoFiles},
	} {
		_, err := Open(c.pattern)
		want := fmt.Sprintf("(relative to the current directory %s: %s)", wd, filepath.Join(wd, c.pattern))
		if !errors.Is(err, c.want) || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want %v saying %q", c.pattern, err, c.want, want)
		}
	}
	abs := filepath.Join(wd, "none")
	if _, err := Open(abs); err == nil || strings.Contains(err.Error(), "relative") {
		t.Errorf("Open(%s) = %v: an absolute path is not relative to anything", abs, err)
	}
}
