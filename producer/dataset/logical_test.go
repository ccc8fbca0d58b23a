package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/internal/thrift"
	"github.com/shmloader/shmloader/producer/pages"
)

// writeLogical writes n rows of: id int64 (required), j BYTE_ARRAY (JSON), u
// FIXED_LEN_BYTE_ARRAY(16) (UUID), s BYTE_ARRAY (String), all plain and uncompressed.
func writeLogical(t *testing.T, path string, n int) {
	t.Helper()
	node := func(name string, lt schema.LogicalType, typ parquet.Type, rep parquet.Repetition, l int) schema.Node {
		nd, err := schema.NewPrimitiveNodeLogical(name, rep, lt, typ, l, -1)
		if err != nil {
			t.Fatal(err)
		}
		return nd
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{
		node("id", schema.NoLogicalType{}, parquet.Types.Int64, parquet.Repetitions.Required, -1),
		node("j", schema.JSONLogicalType{}, parquet.Types.ByteArray, parquet.Repetitions.Optional, -1),
		node("u", schema.UUIDLogicalType{}, parquet.Types.FixedLenByteArray, parquet.Repetitions.Optional, 16),
		node("s", schema.StringLogicalType{}, parquet.Types.ByteArray, parquet.Repetitions.Optional, -1),
	}, -1)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, n)
	js, ss := make([]parquet.ByteArray, n), make([]parquet.ByteArray, n)
	us := make([]parquet.FixedLenByteArray, n)
	def := make([]int16, n)
	for i := range n {
		ids[i], def[i] = int64(i), 1
		js[i] = parquet.ByteArray(`{"k":` + string(rune('0'+i%10)) + `}`)
		ss[i] = parquet.ByteArray("s" + string(rune('a'+i%26)))
		u := make([]byte, 16)
		u[15] = byte(i)
		us[i] = u
	}
	props := []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithStats(true)}
	testkit.WriteColumns(t, path, root, props, 1, func(_, col int, cw file.ColumnChunkWriter) error {
		var err error
		switch col {
		case 0:
			_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(ids, nil, nil)
		case 1:
			_, err = cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(js, def, nil)
		case 2:
			_, err = cw.(*file.FixedLenByteArrayColumnChunkWriter).WriteBatch(us, def, nil)
		case 3:
			_, err = cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(ss, def, nil)
		}
		return err
	})
}

// rewriteFooter replaces the footer of the Parquet file at path with edit's version of
// it (the data before it unchanged, or changed by data).
func rewriteFooter(t *testing.T, path string, edit func(root *thrift.Value), data func(body []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	body, raw := b[:len(b)-8-n], b[len(b)-8-n:len(b)-8]
	root, err := thrift.NewReader(raw).Struct()
	if err != nil {
		t.Fatal(err)
	}
	edit(&root)
	if data != nil {
		body = data(append([]byte(nil), body...))
	}
	foot := thrift.Append(nil, thrift.Struct, root)
	out := append(append([]byte(nil), body...), foot...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(foot)))
	out = append(out, "PAR1"...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// schemaElement is the element of column name in a footer tree.
func schemaElement(t testing.TB, root *thrift.Value, name string) *thrift.Value {
	t.Helper()
	sc := root.Field(fmdSchema)
	for i := range sc.Value.Items {
		el := &sc.Value.Items[i]
		if n, ok := el.Field(seName).Text(); ok && n == name {
			return el
		}
	}
	t.Fatalf("no schema element %q", name)
	return nil
}

func zigzag32(v int32) []byte { return binary.AppendUvarint(nil, uint64(uint32(v<<1^v>>31))) }

// A logical type this reader does not know (a newer writer's) is read by its physical
// type, as pyarrow reads it, and so is a converted type past the known ones (pyarrow
// refuses those files); known logical types the transforms do not take (JSON, UUID)
// leave the other columns usable.
func TestUnknownLogicalTypesReadAsPhysical(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.parquet")
	writeLogical(t, p, 20)
	d, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := d.Field("j"); f.Type.ID() != arrow.BINARY {
		t.Fatalf("JSON column is %s", f.Type)
	}
	if f, _ := d.Field("u"); f.Type.ID() != arrow.EXTENSION {
		t.Fatalf("UUID column is %s", f.Type)
	}
	if len(d.Files[0].Notes) != 0 {
		t.Fatalf("notes %q", d.Files[0].Notes)
	}
	q := filepath.Join(dir, "b.parquet")
	writeLogical(t, q, 20)
	rewriteFooter(t, p, func(root *thrift.Value) {
		schemaElement(t, root, "j").Field(seLogicalType).Value.Fields[0].ID = 99 // JSON (12) → 99
	}, nil)
	rewriteFooter(t, q, func(root *thrift.Value) {
		el := schemaElement(t, root, "s")
		el.Drop(seLogicalType)
		el.Field(seConvertedType).Value.Raw = zigzag32(40) // UTF8 (0) → 40
	}, nil)
	for _, path := range []string{p, q} {
		b, _ := os.ReadFile(path)
		n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
		if _, err := parseFooter(b[len(b)-8-n : len(b)-8]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("arrow-go read the unknown type of %s: %v", path, err)
		}
	}
	for _, c := range []struct{ path, col, note, value string }{
		{p, "j", `column "j": logical type 99 is unknown`, "eyJrIjoxfQ=="}, // base64 of {"k":1}
		{q, "s", `column "s": converted type 40 is unknown`, "c2I="},       // "sb"
	} {
		d, err := Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if notes := strings.Join(d.Files[0].Notes, "\n"); !strings.Contains(notes, c.note) {
			t.Errorf("notes %q do not say %q", notes, c.note)
		}
		if f, _ := d.Field(c.col); f.Type.ID() != arrow.BINARY {
			t.Errorf("%s is %s, want binary (its physical type)", c.col, f.Type)
		}
		got := readColumns(t, d, "id", c.col)
		if len(got["id"]) != 20 || got[c.col][1] != c.value {
			t.Errorf("%s = %v", c.col, got[c.col][:2])
		}
	}
}

// A data page of no values is valid Parquet. arrow-go (like Arrow C++, and so pyarrow,
// which silently returns fewer rows) takes one for the end of the chunk; the reader
// drops such pages before arrow-go sees the chunk.
func TestEmptyDataPageIsSkipped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.parquet")
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 10 {
		if i%3 == 1 {
			b.AppendNull()
		} else {
			b.Append(int64(i))
		}
	}
	a := b.NewArray()
	defer a.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{a}, 10)
	defer rec.Release()
	testkit.WriteParquet(t, p, rec, testkit.Parquet{Props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}})
	insertEmptyPage(t, p)
	d, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0", "null", "2", "3", "null", "5", "6", "null", "8", "9"}
	if got := readColumns(t, d, "x")["x"]; !slices.Equal(got, want) {
		t.Fatalf("x = %v", got)
	}
	// The page decoder reads the chunk as stored, empty page included.
	r, err := d.OpenReader(d.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, _ := d.Files[0].Leaf("x")
	chunks, _, err := r.ReadChunks(context.Background(), 0, []Leaf{l}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dec pages.Decoder
	if err := dec.Reset(chunks[0]); err != nil {
		t.Fatal(err)
	}
	var v pages.Values
	n, err := dec.Read(10, &v)
	if err != nil || n != 10 || v.I64[2] != 2 || v.Null[1] != 1 {
		t.Fatalf("page decoder: %d values, %v", n, err)
	}
	if err := dec.Finish(); err != nil {
		t.Fatal(err)
	}
}

func zigzag64(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1^v>>63)) }

func unzigzag(raw []byte) int64 {
	u, _ := binary.Uvarint(raw)
	return int64(u>>1) ^ -int64(u&1)
}

// addI64 adds delta to i64 field id of struct v, if v has it and at least from.
func addI64(v *thrift.Value, id int16, from, delta int64) {
	if f := v.Field(id); f != nil && unzigzag(f.Value.Raw) >= from {
		f.Value.Raw = zigzag64(unzigzag(f.Value.Raw) + delta)
	}
}

// insertEmptyPage puts a data page of 0 values (v1, an empty definition-level run)
// before the data page of the file at path, which has one column and one row group,
// and fixes the footer's sizes and offsets.
func insertEmptyPage(t *testing.T, path string) {
	t.Helper()
	i32 := func(v int32) thrift.Value { return thrift.Value{Raw: zigzag32(v)} }
	page := thrift.Append(nil, thrift.Struct, thrift.Value{Fields: []thrift.Field{
		{ID: 1, Type: thrift.I32, Value: i32(0)}, // DATA_PAGE
		{ID: 2, Type: thrift.I32, Value: i32(4)}, // sizes: the 4 bytes of the level run's length
		{ID: 3, Type: thrift.I32, Value: i32(4)},
		{ID: 5, Type: thrift.Struct, Value: thrift.Value{Fields: []thrift.Field{ // DataPageHeader
			{ID: 1, Type: thrift.I32, Value: i32(0)}, // num_values
			{ID: 2, Type: thrift.I32, Value: i32(0)}, // PLAIN
			{ID: 3, Type: thrift.I32, Value: i32(3)}, // RLE
			{ID: 4, Type: thrift.I32, Value: i32(3)}, // RLE
		}}},
	}})
	page = append(page, 0, 0, 0, 0)
	n := int64(len(page))
	var at int64
	rewriteFooter(t, path, func(root *thrift.Value) {
		rgs := root.Field(4).Value.Items
		if len(rgs) != 1 || len(rgs[0].Field(1).Value.Items) != 1 {
			t.Fatal("insertEmptyPage wants one row group of one column")
		}
		rg := &rgs[0]
		cc := &rg.Field(1).Value.Items[0]
		md := &cc.Field(3).Value
		if md.Field(11) != nil {
			t.Fatal("insertEmptyPage wants no dictionary page")
		}
		at = unzigzag(md.Field(9).Value.Raw)
		addI64(cc, 2, at+1, n)  // file_offset, where it points past the data page
		addI64(cc, 4, at+1, n)  // offset index
		addI64(cc, 6, at+1, n)  // column index
		addI64(md, 14, at+1, n) // bloom filter
		addI64(rg, 5, at+1, n)
		addI64(md, 6, 0, n) // sizes
		addI64(md, 7, 0, n)
		addI64(rg, 2, 0, n)
		addI64(rg, 6, 0, n)
	}, func(body []byte) []byte {
		return append(body[:at], append(page, body[at:]...)...)
	})
}
