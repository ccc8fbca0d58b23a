package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
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
		rec := testkit.RecordFromJSON(t, sc, `[{"id": 1, "st": {"a": 2}}]`)
		testkit.WriteParquet(t, filepath.Join(root, dir, "p.parquet"), rec, testkit.Parquet{})
		rec.Release()
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
