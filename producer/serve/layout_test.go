package serve

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/colsrc"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/transform"
)

const layoutRows = 100

// layoutFile is one file of the layouts dataset: its folder, and whether it writes the
// large and dictionary variants of the columns (as polars and pandas categoricals do).
type layoutFile struct {
	dir   string
	first int64
	large bool
}

var layoutFiles = []layoutFile{
	{"year=2024/country=fr", 0, false},
	{"year=2025/country=__HIVE_DEFAULT_PARTITION__/sub", layoutRows, true},
}

// layoutRow is row i: id i; c a category; s a string; l a list; st.a, st.b.c nested
// with nulls at every level.
func layoutRow(i int64) string {
	c := []string{`"red"`, `"blue"`, `null`, `"green"`}[i%4]
	s := fmt.Sprintf(`"s%d"`, i%7)
	if i%5 == 2 {
		s = "null"
	}
	l := "null"
	if i%6 != 3 {
		parts := make([]string, i%5)
		for k := range parts {
			parts[k] = fmt.Sprint(i + int64(k))
		}
		l = "[" + strings.Join(parts, ",") + "]"
	}
	st := fmt.Sprintf(`{"a": %d, "b": {"c": %g}}`, i, float64(i)/4)
	switch i % 9 {
	case 1:
		st = "null"
	case 4:
		st = fmt.Sprintf(`{"a": %d, "b": null}`, i)
	case 7:
		st = fmt.Sprintf(`{"a": %d, "b": {"c": null}}`, i)
	}
	return fmt.Sprintf(`{"id": %d, "c": %s, "s": %s, "l": %s, "st": %s}`, i, c, s, l, st)
}

// writeLayouts writes the layouts dataset under root: hive folders, a nested folder,
// per-file variants of the same columns, structs, a _SUCCESS marker and a hidden file.
func writeLayouts(t testing.TB, root string) {
	t.Helper()
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "b", Type: arrow.StructOf(arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true})
	for _, f := range layoutFiles {
		str, lst := arrow.DataType(arrow.BinaryTypes.String), arrow.DataType(arrow.ListOf(arrow.PrimitiveTypes.Int64))
		cat := str
		if f.large {
			str, lst = arrow.BinaryTypes.LargeString, arrow.LargeListOf(arrow.PrimitiveTypes.Int64)
			cat = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		}
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "c", Type: cat, Nullable: true},
			{Name: "s", Type: str, Nullable: true},
			{Name: "l", Type: lst, Nullable: true},
			{Name: "st", Type: st, Nullable: true},
		}, nil)
		rows := make([]string, layoutRows)
		for k := range rows {
			rows[k] = layoutRow(f.first + int64(k))
		}
		rec := testkit.RecordFromJSON(t, sc, "["+strings.Join(rows, ",")+"]")
		testkit.WriteParquet(t, filepath.Join(root, filepath.FromSlash(f.dir), "part-0.parquet"), rec, testkit.Parquet{
			Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(30)},
			Arrow: []pqarrow.WriterOption{pqarrow.WithStoreSchema()},
		})
		rec.Release()
	}
	os.WriteFile(filepath.Join(root, "_SUCCESS"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "year=2024", ".part-0.parquet.crc"), []byte("crc"), 0o644)
}

const layoutOutputs = `
outputs:
  id: id
  year_x: {columns: [year, st.b.c], dtype: float64}
  nested: {columns: [st.a, st.b.c], dtype: float64, transforms: [{fill_null: -1}]}
  country: {columns: country, transforms: [{fill_null: "none"}, {hash_bucket: 1000}]}
  year_hash: {columns: year, transforms: [{hash_bucket: 7}]}
  cat: {columns: c, transforms: [{fill_null: "?"}, {hash_bucket: 1000}]}
  s: {columns: s, transforms: [{hash_bucket: 1000}]}
  l: {columns: l, transforms: [{pad: {length: 3, value: -1}}]}
`

// decoded is every tensor of every row (in file order) as float64, by tensor name.
type decoded map[string][][]float64

// The roads a row group's outputs can be decoded by (decodeAll).
const (
	viaPages   = "pages"    // as serve does by default: flat outputs from pages, the rest as arrays
	viaArrays  = "arrays"   // SHMLOADER_DECODER=arrow: every output as arrays
	viaArrowGo = "arrow-go" // every column through arrow-go, then ApplyTo: the reference
)

// decodeAll decodes every row group of ds by road (viaPages, viaArrays, viaArrowGo), as
// a worker does, and returns the kept rows. pagesFor lists the outputs the page path
// took for every row group.
func decodeAll(t *testing.T, ds *dataset.Dataset, cfg *config.Config, road string) (out decoded, pagesFor []string) {
	t.Helper()
	src, err := newSource(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	src.useArrays(road == viaArrays)
	layout := newRowLayout(src.rowSize)
	rs := newReaders(ds)
	rs.pages = src.cols.NewWorker()
	defer rs.close()
	out = decoded{}
	paged := map[string]int{}
	for _, rg := range ds.RowGroups {
		r, err := rs.get(rg.File)
		if err != nil {
			t.Fatal(err)
		}
		kept := rg.Rows
		if src.filtering() {
			if kept, err = src.countKept(context.Background(), colsrc.NewArrays(ds), r, rg); err != nil {
				t.Fatal(err)
			}
		}
		for o, ls := range rs.pages.Plan(rg) {
			if ls != nil && road == viaPages {
				paged[src.outputs[o].Name()]++
			}
		}
		dst := make([]byte, int(kept)*layout.stride)
		if road == viaArrowGo {
			decodeArrowGo(t, src, r, rg, kept, dst, &layout)
		} else if err := src.decode(context.Background(), rs.pages, r, rg, kept, dst, &layout); err != nil {
			t.Fatal(err)
		}
		for k := range int(kept) {
			for ti, ten := range src.tensors {
				n := max(1, product(ten.Shape))
				row := make([]float64, n)
				at := k*layout.stride + layout.off[ti]
				for e := range n {
					b := dst[at+e*ten.DType.Size():]
					switch ten.DType.Size() {
					case 8:
						if ten.DType.String() == "float64" {
							row[e] = math.Float64frombits(binary.LittleEndian.Uint64(b))
						} else {
							row[e] = float64(int64(binary.LittleEndian.Uint64(b)))
						}
					case 4:
						if ten.DType.String() == "float32" {
							row[e] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
						} else {
							row[e] = float64(int32(binary.LittleEndian.Uint32(b)))
						}
					case 2:
						row[e] = float64(binary.LittleEndian.Uint16(b))
					case 1:
						row[e] = float64(b[0])
					}
				}
				out[ten.Name] = append(out[ten.Name], row)
			}
		}
	}
	for name, n := range paged {
		if n == len(ds.RowGroups) {
			pagesFor = append(pagesFor, name)
		}
	}
	slices.Sort(pagesFor)
	return out, pagesFor
}

// decodeArrowGo is src.decode with every column read through arrow-go
// (dataset.Reader.ReadRowGroup), filtered, and every output written by ApplyTo.
func decodeArrowGo(t *testing.T, src *source, r *dataset.Reader, rg dataset.RowGroup, kept int64, dst []byte, l *rowLayout) {
	t.Helper()
	cols, err := r.ReadRowGroup(context.Background(), rg.Index, src.columns)
	if err != nil {
		t.Fatal(err)
	}
	defer release(cols)
	sel, err := src.selectRows(cols, rg)
	if err != nil {
		t.Fatal(err)
	}
	if sel != nil && int64(len(sel)) != kept {
		t.Fatalf("row group %d: arrow-go keeps %d rows, the page decoder's arrays %d", rg.Global, len(sel), kept)
	}
	for o, out := range src.outputs {
		ten := out.Tensors()
		d := transform.Dest{Bufs: make([][]byte, len(ten)), Stride: make([]int, len(ten))}
		for i := range ten {
			d.Bufs[i], d.Stride[i] = dst[l.off[src.outTen[o]+i]:], l.stride
		}
		in := make([]*arrow.Chunked, len(src.outCols[o]))
		for i, c := range src.outCols[o] {
			in[i] = cols[c]
		}
		if err := out.ApplyTo(in, sel, d); err != nil {
			t.Fatal(err)
		}
	}
}

// sameDecoded fails unless got (by road) has want's rows, bit for bit.
func sameDecoded(t *testing.T, road string, got, want decoded) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d tensors, want %d", road, len(got), len(want))
	}
	for name, rows := range want {
		if len(got[name]) != len(rows) {
			t.Fatalf("%s: %s has %d rows, want %d", road, name, len(got[name]), len(rows))
		}
		for k := range rows {
			if !sameBits(got[name][k], rows[k]) {
				t.Fatalf("%s: %s row %d is %v, arrow-go's %v", road, name, k, got[name][k], rows[k])
			}
		}
	}
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if len(shape) == 0 {
		return 0
	}
	return n
}

// Every layout serves the same values by the page path, the array path and arrow-go:
// partition columns (alone, stacked with a struct's field, hashed, null), fields of
// structs at two depths with nulls at every level, a category written as a string in
// one file and a dictionary in the other, string beside large_string, list beside
// large_list.
func TestLayoutsOnEveryRoad(t *testing.T) {
	root := t.TempDir()
	writeLayouts(t, root)
	ds, err := dataset.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("dataset: "+root+"\n"+layoutOutputs), "layouts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pg, paged := decodeAll(t, ds, cfg, viaPages)
	ar, _ := decodeAll(t, ds, cfg, viaArrays)
	ref, _ := decodeAll(t, ds, cfg, viaArrowGo)
	if want := []string{"cat", "country", "id", "nested", "s", "year_hash", "year_x"}; !slices.Equal(paged, want) {
		t.Fatalf("outputs read from pages: %v, want %v", paged, want)
	}
	sameDecoded(t, viaPages, pg, ref)
	sameDecoded(t, viaArrays, ar, ref)
	hashes := map[string]map[float64]float64{} // output -> raw value id -> hash
	for k := range 2 * layoutRows {
		i := int64(k)
		year := 2024.0 + float64(k/layoutRows)
		c := float64(i) / 4
		a := float64(i)
		switch i % 9 {
		case 1:
			a, c = -1, -1
		case 4, 7:
			c = -1
		}
		if got := pg["id"][k][0]; got != float64(i) {
			t.Fatalf("row %d: id %g", k, got)
		}
		if got := pg["nested"][k]; got[0] != a || got[1] != c {
			t.Fatalf("row %d: nested %v, want [%g %g]", k, got, a, c)
		}
		yx := pg["year_x"][k]
		if wantC := c; yx[0] != year || (wantC == -1) != math.IsNaN(yx[1]) || (wantC != -1 && yx[1] != wantC) {
			t.Fatalf("row %d: year_x %v, want [%g %g]", k, yx, year, c)
		}
		wantLen := min(3, int(i%5))
		if i%6 == 3 {
			wantLen = 0
		}
		if got := ar["l_len"][k][0]; got != float64(wantLen) {
			t.Fatalf("row %d: l_len %g, want %d", k, got, wantLen)
		}
		// Equal values hash equally in both files, whatever layout each wrote.
		for name, raw := range map[string]float64{"cat": float64(i % 4), "country": year, "year_hash": year, "s": float64(i % 7)} {
			if name == "s" && i%5 == 2 {
				raw = -1
			}
			if hashes[name] == nil {
				hashes[name] = map[float64]float64{}
			}
			h := pg[name][k][0]
			if prev, ok := hashes[name][raw]; ok && prev != h {
				t.Fatalf("row %d: %s hashes %g, an equal value hashed %g", k, name, h, prev)
			}
			hashes[name][raw] = h
		}
	}
	if len(hashes["cat"]) != 4 || len(hashes["country"]) != 2 || hashes["year_hash"][2024] == hashes["year_hash"][2025] {
		t.Fatalf("hashes %v", hashes)
	}
}

// A filter on a partition column skips whole files by their folder's value.
func TestFilterOnPartitionColumn(t *testing.T) {
	root := t.TempDir()
	writeLayouts(t, root)
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
dataset: %s
batch_size: 10
epochs: 1
progress: 0s
shuffle: {row_groups: false, window: 0}
filter: [{column: year, op: "==", value: 2025}, {column: st.a, op: ">=", value: 150}]
%s`, root, layoutOutputs)), "filter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	src, err := newSource(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var scanned []int
	for _, rg := range ds.RowGroups {
		if ok, err := src.mayMatch(rg); err != nil {
			t.Fatal(err)
		} else if ok {
			scanned = append(scanned, rg.Global)
		}
	}
	// 4 row groups of 30, 30, 30 and 10 rows per file: year=2024's all skipped, and
	// year=2025's first, whose st.a stops at 129.
	if !slices.Equal(scanned, []int{5, 6, 7}) {
		t.Fatalf("row groups the statistics leave: %v", scanned)
	}
	out := serveAndRead(t, cfg, Options{}, nil)
	ids := out[0].ids[0]
	slices.Sort(ids)
	want := make([]int64, 0, 50)
	for i := int64(150); i < 200; i++ {
		if i%9 != 1 { // a null st has a null st.a
			want = append(want, i)
		}
	}
	want = want[:len(want)/10*10] // drop_last
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
}
