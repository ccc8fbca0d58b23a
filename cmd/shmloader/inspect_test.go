package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// inspect lists the fields of structs by dotted path and the partition columns of
// key=value folders, found at any depth.
func TestInspectStructsAndPartitions(t *testing.T) {
	root := t.TempDir()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), Nullable: true},
	}, nil)
	for _, dir := range []string{"day=1/x", "day=2"} {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(`[{"id": 1, "st": {"a": 2}}]`))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		fh, err := os.Create(filepath.Join(root, dir, "p.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		fw, err := pqarrow.NewFileWriter(sc, fh, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
		if err == nil {
			err = fw.Write(rec)
		}
		if err == nil {
			err = fw.Close()
		}
		fh.Close()
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	var out, log bytes.Buffer
	if err := inspectCommand([]string{root}, &out, &log); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`schema \(3 columns, the last 1 from key=value folders\):`),
		regexp.MustCompile(`(?m)^  id +int64 +no$`),
		regexp.MustCompile(`(?m)^  st\.a +int32 +yes  field of a struct$`),
		regexp.MustCompile(`(?m)^  day +int32 +no   partition: day=\.\.\. folders$`),
		regexp.MustCompile(`day=1/x/p\.parquet +1 +1 `),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("inspect output lacks %s:\n%s", want, out.String())
		}
	}
}
