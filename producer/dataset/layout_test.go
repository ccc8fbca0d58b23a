package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/internal/testkit"
)

// writeJSON writes rows (a JSON array of objects) of schema sc to path with the Arrow
// schema stored in the footer, as pyarrow and polars do, so that large_string,
// large_list and dictionaries read back as written. Row groups hold rgRows rows (0: one).
func writeJSON(t testing.TB, path string, sc *arrow.Schema, rows string, rgRows int64) {
	t.Helper()
	rec := testkit.RecordFromJSON(t, sc, rows)
	defer rec.Release()
	if rgRows == 0 {
		rgRows = rec.NumRows() + 1
	}
	testkit.WriteParquet(t, path, rec, testkit.Parquet{
		Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(rgRows)},
		Arrow: []pqarrow.WriterOption{pqarrow.WithStoreSchema()},
	})
}

// readColumns reads columns of every row group of d and returns each column's values
// as text, row groups concatenated (null as "null").
func readColumns(t testing.TB, d *Dataset, columns ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	groups := readAll(t, d, columns)
	defer release(groups)
	for _, g := range groups {
		for i, c := range g {
			want, _ := d.Field(columns[i])
			if !typeEqual(c.DataType(), want.Type) {
				t.Fatalf("column %q read as %s, the schema says %s", columns[i], c.DataType(), want.Type)
			}
			for _, ch := range c.Chunks() {
				if !typeEqual(ch.DataType(), want.Type) {
					t.Fatalf("column %q: a chunk is %s, the schema says %s", columns[i], ch.DataType(), want.Type)
				}
				for k := range ch.Len() {
					v := "null"
					if ch.IsValid(k) {
						v = ch.ValueStr(k)
					}
					out[columns[i]] = append(out[columns[i]], v)
				}
			}
		}
	}
	return out
}

func relPaths(d *Dataset, root string) []string {
	var out []string
	for _, f := range d.Files {
		r, _ := filepath.Rel(root, f.Path)
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func TestOpenWalksDirectoriesSkippingHiddenAndUnderscore(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.parquet", "sub/b.parquet", "sub/deeper/c.parquet", "sub-z.parquet",
		"_delta_log/d.parquet", ".hidden/e.parquet", "sub/.f.parquet", "sub/_g.parquet", "_h.parquet"} {
		writeJSON(t, filepath.Join(dir, p), idSchema, `[{"id": 1}]`, 0)
	}
	for _, p := range []string{"_SUCCESS", "sub/.c.parquet.crc", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by path: "sub-z" sorts before "sub/" ('-' < '/').
	want := []string{"a.parquet", "sub-z.parquet", "sub/b.parquet", "sub/deeper/c.parquet"}
	if got := relPaths(d, dir); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if d.Partitions != nil {
		t.Fatalf("partitions %v from folders without key=value", d.Partitions)
	}
	// A glob skips hidden and _ names too, unless it asks for them.
	g, err := Open(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got := relPaths(g, dir); !slices.Equal(got, []string{"a.parquet", "sub-z.parquet"}) {
		t.Fatalf("glob: files %v", got)
	}
	if g, err = Open(filepath.Join(dir, "_*.parquet")); err != nil || len(g.Files) != 1 {
		t.Fatalf("glob _*.parquet: %v, %v", g, err)
	}
	// Below its wildcards too: _delta_log/d.parquet and .hidden/e.parquet stay out.
	if g, err = Open(filepath.Join(dir, "*", "*.parquet")); err != nil {
		t.Fatal(err)
	} else if got := relPaths(g, dir); !slices.Equal(got, []string{"sub/b.parquet"}) {
		t.Fatalf("glob */*.parquet: files %v", got)
	}
	if g, err = Open(filepath.Join(dir, "_*", "*.parquet")); err != nil || len(g.Files) != 1 {
		t.Fatalf("glob _*/*.parquet: %v, %v", g, err)
	}
	// Relative to the current directory.
	t.Chdir(dir)
	if g, err = Open("*.parquet"); err != nil || len(g.Files) != 2 {
		t.Fatalf("glob *.parquet in the current directory: %v, %v", g, err)
	}
}

func TestHivePartitionColumns(t *testing.T) {
	root := t.TempDir()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	files := []string{
		"year=2024/country=de%20x/part-0.parquet",
		"year=2024/country=fr/part-0.parquet",
		"year=2025/country=__HIVE_DEFAULT_PARTITION__/part-0.parquet",
		"year=2025/country=fr/more/part-1.parquet", // a folder without "=" is no key
	}
	for i, p := range files {
		writeJSON(t, filepath.Join(root, p), sc, `[{"id": `+string(rune('0'+i))+`}, {"id": 9}]`, 1)
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Partitions) != 2 || d.Partitions[0].Name != "year" || d.Partitions[0].Type.ID() != arrow.INT32 || d.Partitions[0].Nullable ||
		d.Partitions[1].Name != "country" || d.Partitions[1].Type.ID() != arrow.STRING || !d.Partitions[1].Nullable {
		t.Fatalf("partitions %v", d.Partitions)
	}
	if got := strings.Join(d.ColumnNames(), ","); got != "id,year,country" {
		t.Fatalf("ColumnNames = %s", got)
	}
	if !d.IsPartition("year") || d.IsPartition("id") {
		t.Fatal("IsPartition")
	}
	got := readColumns(t, d, "id", "country", "year")
	if want := []string{"2024", "2024", "2024", "2024", "2025", "2025", "2025", "2025"}; !slices.Equal(got["year"], want) {
		t.Fatalf("year %v", got["year"])
	}
	if want := []string{"de x", "de x", "fr", "fr", "null", "null", "fr", "fr"}; !slices.Equal(got["country"], want) {
		t.Fatalf("country %v", got["country"])
	}
	// Statistics are exact: a filter on a partition column rules out whole files.
	st, err := d.Stats(d.RowGroups[0], "year")
	if err != nil || st.Kind != KindInt || !st.HasMinMax || st.MinI != 2024 || st.MaxI != 2024 || st.NullCount != 0 {
		t.Fatalf("stats of year: %+v, %v", st, err)
	}
	st, err = d.Stats(d.RowGroups[4], "country")
	if err != nil || st.HasMinMax || !st.HasNullCount || st.NullCount != st.Rows {
		t.Fatalf("stats of a null country: %+v, %v", st, err)
	}
	if st, _ = d.Stats(d.RowGroups[2], "country"); st.Kind != KindString || st.MinS != "fr" || st.MaxS != "fr" {
		t.Fatalf("stats of country fr: %+v", st)
	}
	// A glob's root is the folder before its first wildcard.
	g, err := Open(filepath.Join(root, "year=*", "country=fr", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Files) != 1 || len(g.Partitions) != 2 || g.Files[0].part[0].i32 != 2024 {
		t.Fatalf("glob: %d files, partitions %v", len(g.Files), g.Partitions)
	}
	// The folders' values are data: moving a file to another value changes the
	// fingerprint, copying the whole tree does not.
	fp := d.Fingerprint()
	if err := os.Rename(filepath.Join(root, "year=2025"), filepath.Join(root, "year=2026")); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Fingerprint() == fp {
		t.Fatal("moving files to year=2026 kept the fingerprint")
	}
}

func TestHivePartitionErrors(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	cases := []struct {
		files   []string
		mention []string
	}{
		{[]string{"k=1/x.parquet", "y.parquet"}, []string{"y.parquet", "keys ()", "k=1/x.parquet has (k)"}},
		{[]string{"k=1/j=2/x.parquet", "k=2/x.parquet"}, []string{"k=2/x.parquet", "keys (k)", "has (k, j)"}},
		{[]string{"j=1/k=2/x.parquet", "k=1/j=2/x.parquet"}, []string{"k=1/j=2/x.parquet", "keys (k, j)", "has (j, k)"}},
		{[]string{"a=1/x.parquet"}, []string{"x.parquet", `column "a"`, "both a column of the files and a partition key"}},
		{[]string{"k=1/k=2/x.parquet"}, []string{"x.parquet", `partition key "k" appears twice`}},
	}
	for _, c := range cases {
		root := t.TempDir()
		for _, p := range c.files {
			writeJSON(t, filepath.Join(root, p), sc, `[{"a": 1}]`, 0)
		}
		_, err := Open(root)
		if !errors.Is(err, ErrSchema) {
			t.Errorf("%v: %v, want ErrSchema", c.files, err)
			continue
		}
		for _, m := range c.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%v: %q does not mention %q", c.files, err, m)
			}
		}
	}
}

// Partition values are typed as pyarrow's default hive partitioning infers them
// (checked against pyarrow 26): int32 when every value parses, else string.
func TestPartitionValueInference(t *testing.T) {
	ints := map[string]int32{"1": 1, "01": 1, "-7": -7, "-0": 0, "2147483647": 2147483647,
		"-2147483648": -2147483648, "0x10": 16, "0X10": 16, "0xFFFFFFFF": -1, "0x80000000": -2147483648,
		"00000000000000000000001": 1}
	for s, want := range ints {
		if got, ok := parseInt32(s); !ok || got != want {
			t.Errorf("parseInt32(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", "--1", "+5", " 5", "1 ", "1.5", "1e3", "2147483648", "-2147483649",
		"3000000000", "0x", "0x1G", "-0x10", "0x000000010", "１", "1_000"} {
		if v, ok := parseInt32(s); ok {
			t.Errorf("parseInt32(%q) = %d, want not an int32", s, v)
		}
	}
	root := t.TempDir()
	for _, p := range []string{"k=1/x.parquet", "k=%31%32/x.parquet", "k=3000000000/x.parquet"} {
		writeJSON(t, filepath.Join(root, p), idSchema, `[{"id": 1}]`, 0)
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if d.Partitions[0].Type.ID() != arrow.STRING {
		t.Fatalf("k is %s with a value past int32", d.Partitions[0].Type)
	}
	// Sorted by path: "k=%31%32" comes first.
	if got := readColumns(t, d, "k")["k"]; !slices.Equal(got, []string{"12", "1", "3000000000"}) {
		t.Fatalf("k = %v", got)
	}
}

// Files that write a column in different layouts of the same values share one column;
// each file's arrays are converted to the merged type.
func TestMergedLayouts(t *testing.T) {
	dir := t.TempDir()
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	plain := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	large := arrow.NewSchema([]arrow.Field{
		{Name: "c", Type: dict, Nullable: true}, // columns in another order
		{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "l", Type: arrow.LargeListOfNonNullable(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.LargeString, Nullable: true}), Nullable: true},
	}, nil)
	rows := `[{"s": "a", "b": "AQI=", "l": [1, 2], "st": {"x": "p"}, "c": "red"},
	          {"s": null, "b": null, "l": null, "st": null, "c": null},
	          {"s": "", "b": "", "l": [], "st": {"x": null}, "c": "blue"}]`
	writeJSON(t, filepath.Join(dir, "a.parquet"), plain, rows, 2)
	writeJSON(t, filepath.Join(dir, "b.parquet"), large, rows, 2)
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]arrow.DataType{
		"s": arrow.BinaryTypes.LargeString, "b": arrow.BinaryTypes.LargeBinary,
		"l":    arrow.LargeListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int64, Nullable: true}),
		"c":    arrow.BinaryTypes.String,
		"st":   arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.LargeString, Nullable: true}),
		"st.x": arrow.BinaryTypes.LargeString,
	}
	for name, typ := range want {
		f, ok := d.Field(name)
		if !ok || !typeEqual(f.Type, typ) {
			t.Errorf("Field(%s) = %v, want %s", name, f.Type, typ)
		}
	}
	got := readColumns(t, d, "s", "b", "l", "c", "st.x", "st")
	for col, w := range map[string][]string{
		"s":    {"a", "null", "", "a", "null", ""},
		"b":    {"AQI=", "null", "", "AQI=", "null", ""},
		"l":    {"[1,2]", "null", "[]", "[1,2]", "null", "[]"},
		"c":    {"red", "null", "blue", "red", "null", "blue"},
		"st.x": {"p", "null", "null", "p", "null", "null"},
	} {
		if !slices.Equal(got[col], w) {
			t.Errorf("%s = %q, want %q", col, got[col], w)
		}
	}
	// A file of dictionaries only still gives plain strings.
	one, err := Open(filepath.Join(dir, "b.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := one.Field("c"); f.Type.ID() != arrow.STRING {
		t.Fatalf("dictionary column is %s", f.Type)
	}
	// Other differences are still refused, naming the file.
	other := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, plain.Field(1), plain.Field(2), plain.Field(3), plain.Field(4)}, nil)
	writeJSON(t, filepath.Join(dir, "c.parquet"), other, `[{"s": 1}]`, 0)
	_, err = Open(dir)
	if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "c.parquet") || !strings.Contains(err.Error(), `column "s"`) {
		t.Fatalf("int64 beside strings: %v", err)
	}
}

func TestStructFieldsByDottedPath(t *testing.T) {
	dir := t.TempDir()
	inner := arrow.StructOf(arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32},
			arrow.Field{Name: "b", Type: inner, Nullable: true}), Nullable: true},
	}, nil)
	writeJSON(t, filepath.Join(dir, "a.parquet"), sc, `[
		{"id": 0, "st": {"a": 1, "b": {"c": 0.5, "s": "x"}}},
		{"id": 1, "st": null},
		{"id": 2, "st": {"a": 3, "b": null}},
		{"id": 3, "st": {"a": 4, "b": {"c": null, "s": "y"}}}]`, 3)
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.ColumnNames(), ","); got != "id,st,st.a,st.b,st.b.c,st.b.s" {
		t.Fatalf("ColumnNames = %s", got)
	}
	f, ok := d.Field("st.a")
	if !ok || f.Name != "st.a" || f.Type.ID() != arrow.INT32 || !f.Nullable { // required in a nullable struct
		t.Fatalf("Field(st.a) = %v, %v", f, ok)
	}
	if _, ok := d.Field("st.z"); ok {
		t.Fatal("Field(st.z) found")
	}
	got := readColumns(t, d, "st.b.c", "st.a", "st.b.s")
	for col, w := range map[string][]string{
		"st.a":   {"1", "null", "3", "4"},
		"st.b.c": {"0.5", "null", "null", "null"},
		"st.b.s": {"x", "null", "null", "y"},
	} {
		if !slices.Equal(got[col], w) {
			t.Errorf("%s = %q, want %q", col, got[col], w)
		}
	}
	st, err := d.Stats(d.RowGroups[0], "st.a")
	if err != nil || st.Kind != KindInt || st.MinI != 1 || st.MaxI != 3 {
		t.Fatalf("stats of st.a: %+v, %v", st, err)
	}
	// The page decoder finds the leaf by the same path.
	if l, ok := d.Files[0].Leaf("st.b.c"); !ok || l.MaxDef != 3 || l.MaxRep != 0 {
		t.Fatalf("Leaf(st.b.c) = %+v, %v", l, ok)
	}
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadRowGroup(context.Background(), 0, []string{"st.nope"}); !errors.Is(err, ErrNoColumn) {
		t.Fatalf("st.nope: %v", err)
	}
}
