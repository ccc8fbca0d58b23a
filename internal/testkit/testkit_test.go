package testkit

import (
	"bytes"
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

func TestMain(m *testing.M) {
	if role, cfg := Role(); role != "" {
		switch role {
		case "echo": // the config, then its args, a line each; then waits to be killed
			fmt.Println("noise")
			fmt.Println("cfg", cfg)
			fmt.Println("args", strings.Join(os.Args[1:], " "))
			time.Sleep(time.Hour)
		case "fail":
			fmt.Println("error: it went wrong")
			time.Sleep(time.Hour)
		case "exit":
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSpawn(t *testing.T) {
	p := Spawn(t, "echo", map[string]int{"n": 1})
	if l := p.Line(t, "cfg", 20*time.Second); l != `cfg {"n":1}` {
		t.Errorf("config line %q", l)
	}
	if l := p.Line(t, "args", 20*time.Second); l != "args -test.run=^$" {
		t.Errorf("args line %q: the child runs none of the tests", l)
	}
	p.Kill()
	p.Kill() // again: nothing
	if p.Cmd.ProcessState == nil || p.Cmd.ProcessState.Exited() {
		t.Errorf("after Kill: %v, want reaped after a signal", p.Cmd.ProcessState)
	}

	cmd := Command(context.Background(), "exit", "plain text")
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("Command in role exit: %v", err)
	}
	out, err := Command(context.Background(), "", "", "-test.run=^TestNothing$").Output()
	if err != nil || !strings.Contains(string(out), "testing: warning: no tests to run") && !strings.Contains(string(out), "PASS") {
		t.Errorf("without a role the binary runs its tests: %q %v", out, err)
	}
}

// A child's "error" line ends the test that waits on it (here a subtest run in a child
// of its own, so that its failure can be seen).
func TestLineEndsTheTestOnAnErrorLine(t *testing.T) {
	if os.Getenv("TESTKIT_INNER") == "1" {
		Spawn(t, "fail", "").Line(t, "never", 20*time.Second)
		return
	}
	cmd := Command(context.Background(), "", "", "-test.run=^TestLineEndsTheTestOnAnErrorLine$", "-test.v")
	cmd.Env = append(cmd.Env, "TESTKIT_INNER=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "child: error: it went wrong") {
		t.Errorf("want a failure naming the child's line: %v\n%s", err, out)
	}
}

func testRecord(n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil))
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("s", i))
	}
	return b.NewRecordBatch()
}

func readFile(t *testing.T, b []byte) *file.Reader {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteParquet(t *testing.T) {
	rec := testRecord(100)
	defer rec.Release()
	o := Parquet{
		Props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(30)},
		Arrow: []pqarrow.WriterOption{pqarrow.WithStoreSchema()},
		BeforeClose: func(w *pqarrow.FileWriter, written io.ReaderAt) error {
			magic := make([]byte, 4)
			if _, err := written.ReadAt(magic, 0); err != nil {
				return err
			}
			return w.AppendKeyValueMetadata("head", string(magic))
		},
	}
	path := WriteParquet(t, filepath.Join(t.TempDir(), "sub", "a.parquet"), rec, o)
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if inMemory := ParquetBytes(t, rec, o); !bytes.Equal(onDisk, inMemory) {
		t.Fatalf("ParquetBytes differs from the file WriteParquet wrote")
	}
	r := readFile(t, onDisk)
	if r.NumRowGroups() != 4 || r.NumRows() != 100 {
		t.Errorf("%d row groups, %d rows", r.NumRowGroups(), r.NumRows())
	}
	kv := r.MetaData().KeyValueMetadata()
	if kv.FindValue("head") == nil || *kv.FindValue("head") != "PAR1" || kv.FindValue("ARROW:schema") == nil {
		t.Errorf("footer key-values %v", kv)
	}

	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	j := RecordFromJSON(t, sc, `[{"x": 1}, {"x": null}]`)
	defer j.Release()
	if j.NumRows() != 2 || j.Column(0).NullN() != 1 {
		t.Errorf("from JSON: %v", j)
	}
}

func TestWriteColumns(t *testing.T) {
	node := func(name string) schema.Node {
		n, err := schema.NewPrimitiveNode(name, parquet.Repetitions.Optional, parquet.Types.Int64, -1, -1)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{node("a"), node("b")}, -1)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	fill := func(rg, col int, w file.ColumnChunkWriter) error {
		calls = append(calls, fmt.Sprint(rg, col))
		_, err := w.(*file.Int64ColumnChunkWriter).WriteBatch([]int64{int64(rg), int64(col)}, []int16{1, 1, 0}, nil)
		return err
	}
	b := ColumnBytes(t, root, []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, 2, fill)
	if got := strings.Join(calls, ","); got != "0 0,0 1,1 0,1 1" {
		t.Errorf("fill calls %s", got)
	}
	r := readFile(t, b)
	if r.NumRowGroups() != 2 || r.NumRows() != 6 {
		t.Errorf("%d row groups, %d rows", r.NumRowGroups(), r.NumRows())
	}
	path := WriteColumns(t, filepath.Join(t.TempDir(), "c.parquet"), root, []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}, 2, fill)
	if onDisk, err := os.ReadFile(path); err != nil || !bytes.Equal(onDisk, b) {
		t.Errorf("WriteColumns differs from ColumnBytes: %v", err)
	}
}

// TestOnlyTestsImportIt: no file of the module but a _test.go one imports testkit, so it
// never reaches a binary or a package's API.
func TestOnlyTestsImportIt(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	const self = "github.com/shmloader/shmloader/internal/testkit"
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				t.Errorf("%s imports testkit, which is for _test.go files only", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked under %s", checked, root)
	}
}
