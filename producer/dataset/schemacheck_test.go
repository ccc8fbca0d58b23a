package dataset

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shmloader/shmloader/producer/internal/thrift"
)

// setI32 sets i32 field id of struct v, adding it when absent.
func setI32(v *thrift.Value, id int16, x int32) {
	if f := v.Field(id); f != nil {
		f.Type, f.Value = thrift.I32, thrift.Value{Raw: zigzag32(x)}
		return
	}
	v.Fields = append(v.Fields, thrift.Field{ID: id, Type: thrift.I32, Value: thrift.Value{Raw: zigzag32(x)}})
}

// malformedSchemas are footers of real files with one schema element changed, and what
// the error must say. The test file's schema: 0 the root, 1 a, 2 b, 3 s, 4 l (a list),
// 5 its repeated group, 6 its element; the logical file's u is a FIXED_LEN_BYTE_ARRAY(16).
var malformedSchemas = []struct {
	name    string
	logical bool // the file of writeLogical, else of writeTest
	edit    func(t testing.TB, root *thrift.Value)
	want    string
}{
	{"negative num_children (arrow-go: makeslice: cap out of range)", false, func(t testing.TB, root *thrift.Value) {
		setI32(&root.Field(fmdSchema).Value.Items[0], seNumChildren, -1)
	}, `schema element 0 ("schema") claims -1 children`},
	{"num_children of 2^31-1 (arrow-go: out of memory, the process ends)", false, func(t testing.TB, root *thrift.Value) {
		setI32(schemaElement(t, root, "l"), seNumChildren, 2147483647)
	}, `schema element 4 ("l") claims 2147483647 children, the footer has 7 elements`},
	{"the root's children past the elements", false, func(t testing.TB, root *thrift.Value) {
		setI32(&root.Field(fmdSchema).Value.Items[0], seNumChildren, 9)
	}, `schema element 0 ("schema") claims 9 children, the footer has 7 elements`},
	{"a leaf of physical type 99", false, func(t testing.TB, root *thrift.Value) {
		setI32(schemaElement(t, root, "b"), seType, 99)
	}, `schema element 2 ("b") has physical type 99, which Parquet does not have`},
	{"a leaf without a physical type", false, func(t testing.TB, root *thrift.Value) {
		schemaElement(t, root, "a").Drop(seType)
	}, `schema element 1 ("a") has neither children nor a physical type`},
	{"repetition type 7", false, func(t testing.TB, root *thrift.Value) {
		setI32(schemaElement(t, root, "s"), seRepetition, 7)
	}, `schema element 3 ("s") has repetition type 7`},
	{"FIXED_LEN_BYTE_ARRAY of 1 GiB (arrow-go: out of memory, the process ends)", true, func(t testing.TB, root *thrift.Value) {
		el := schemaElement(t, root, "u")
		el.Drop(seLogicalType, seConvertedType)
		setI32(el, seTypeLength, 1<<30)
	}, `("u") is a FIXED_LEN_BYTE_ARRAY of 1073741824 bytes a value`},
	{"FIXED_LEN_BYTE_ARRAY of 0 bytes", true, func(t testing.TB, root *thrift.Value) {
		el := schemaElement(t, root, "u")
		el.Drop(seLogicalType, seConvertedType)
		setI32(el, seTypeLength, 0)
	}, `("u") is a FIXED_LEN_BYTE_ARRAY of 0 bytes a value`},
}

// A footer whose schema is malformed is refused before arrow-go builds its tree from it,
// with an error that says which element is wrong and how: no Go runtime wording, no
// recovered panic, no exhausted memory.
func TestMalformedSchema(t *testing.T) {
	for _, tc := range malformedSchemas {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.parquet")
			if tc.logical {
				writeLogical(t, path, 20)
			} else {
				writeTest(t, filepath.Dir(path), "a.parquet", 0, 20, writeOpts{rgRows: 10})
			}
			if _, err := Open(path); err != nil {
				t.Fatalf("the file as written: %v", err)
			}
			rewriteFooter(t, path, func(root *thrift.Value) { tc.edit(t, root) }, nil)
			_, err := Open(path)
			var de *Error
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &de) || de.Path != path || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrCorrupt naming the file and saying %q", err, tc.want)
			}
			for _, w := range []string{"runtime", "makeslice", "cannot be decoded"} {
				if strings.Contains(de.Err.Error(), w) {
					t.Fatalf("%q says %q", de.Err, w)
				}
			}
		})
	}
}

// FuzzFooter parses arbitrary footer bytes as a file's footer: no input may end the
// process, and no error may carry Go runtime wording (a panic inside arrow-go that
// checkSchema should have prevented). Seeds: a real footer and the malformed schemas.
func FuzzFooter(f *testing.F) {
	dir := f.TempDir()
	path := writeTest(f, dir, "a.parquet", 0, 20, writeOpts{rgRows: 10})
	raw := rawFooter(f, path)
	f.Add(raw)
	for _, tc := range malformedSchemas {
		if tc.logical {
			continue
		}
		root, err := thrift.NewReader(raw).Struct()
		if err != nil {
			f.Fatal(err)
		}
		tc.edit(f, &root)
		f.Add(thrift.Append(nil, thrift.Struct, root))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, err := parseFooter(raw)
		if err != nil && strings.Contains(err.Error(), "runtime error") {
			t.Fatalf("%v", err)
		}
	})
}
