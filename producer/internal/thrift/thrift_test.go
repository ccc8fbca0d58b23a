package thrift

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// A page header as arrow-go writes it: type, sizes, a CRC, a DataPageHeader with a
// Statistics struct (min/max binaries, a null count) inside.
var pageHeader = []byte{
	0x15, 0x00, 0x15, 0x10, 0x15, 0x10, 0x15, 0x8a, 0x01, // type 0, sizes 8 and 8, CRC 69
	0x1c, 0x15, 0x04, 0x15, 0x00, 0x15, 0x06, 0x15, 0x06, // DataPageHeader: 2 values, PLAIN, RLE, RLE
	0x1c, 0x18, 0x02, 'a', 'b', 0x18, 0x01, 'c', 0x16, 0x02, 0x00, // statistics
	0x00, 0x00,
}

func TestReadPageHeader(t *testing.T) {
	r := NewReader(pageHeader)
	var ids []int16
	var vals []int32
	for last := int16(0); ; {
		id, typ, err := r.FieldHeader(last)
		if err != nil {
			t.Fatal(err)
		}
		if typ == Stop {
			break
		}
		if typ == I32 {
			v, err := r.I32()
			if err != nil {
				t.Fatal(err)
			}
			ids, vals = append(ids, id), append(vals, v)
		} else if err := r.Skip(typ); err != nil {
			t.Fatalf("field %d: %v", id, err)
		}
		last = id
	}
	if r.Pos() != len(pageHeader) {
		t.Fatalf("stopped at %d of %d bytes", r.Pos(), len(pageHeader))
	}
	if !reflect.DeepEqual(ids, []int16{1, 2, 3, 4}) || !reflect.DeepEqual(vals, []int32{0, 8, 8, 69}) {
		t.Fatalf("fields %v = %v", ids, vals)
	}
	v, err := NewReader(pageHeader).Struct()
	if err != nil {
		t.Fatal(err)
	}
	if got := Append(nil, Struct, v); !bytes.Equal(got, pageHeader) {
		t.Fatalf("written back as %x", got)
	}
	stats := v.Field(5).Value.Field(5)
	if s, ok := stats.Value.Field(1).Text(); !ok || s != "ab" {
		t.Fatalf("statistics max %q %v", s, ok)
	}
	if n, ok := v.Field(3).I32(); !ok || n != 8 {
		t.Fatalf("compressed size %d %v", n, ok)
	}
	if _, ok := v.Field(9).I32(); ok {
		t.Fatal("an absent field has a value")
	}
}

func TestMalformed(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":                    nil,
		"cut in a varint":          {0x15, 0x80},
		"cut in a binary":          {0x18, 0x05, 'a'},
		"list counts past the end": {0x19, 0xf5, 0xff, 0x01},
		"map counts past the end":  {0x1b, 0x7f, 0x55},
		"unknown type code":        {0x1d, 0x00},
		"field id past 16 bits":    {0x05, 0xff, 0xff, 0x07, 0x00, 0x00},
		"nested past MaxDepth":     bytes.Repeat([]byte{0x1c}, MaxDepth+2),
	} {
		_, err := NewReader(b).Struct()
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Struct: %v", name, err)
		}
		if err := NewReader(b).Skip(Struct); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Skip: %v", name, err)
		}
	}
	if _, err := NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0x7f}).I32(); !errors.Is(err, ErrMalformed) {
		t.Errorf("an i32 past 32 bits: %v", err)
	}
}

// FuzzReader: Skip and Struct accept the same inputs and stop at the same byte; a tree
// written back reads as the same tree and writes as the same bytes again.
func FuzzReader(f *testing.F) {
	f.Add(pageHeader)
	f.Add([]byte{0x19, 0x1c, 0x1c, 0x00, 0x00})
	f.Add([]byte{0x1b, 0x02, 0x58, 0x02, 'k', 0x15, 0x00})
	f.Add([]byte{0x19, 0x21, 0x01, 0x02, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		sr := NewReader(b)
		serr := sr.Skip(Struct)
		tr := NewReader(b)
		v, terr := tr.Struct()
		if (serr == nil) != (terr == nil) || serr == nil && sr.Pos() != tr.Pos() {
			t.Fatalf("Skip: %v at %d; Struct: %v at %d", serr, sr.Pos(), terr, tr.Pos())
		}
		if terr != nil {
			if !errors.Is(terr, ErrMalformed) {
				t.Fatalf("%v, want ErrMalformed", terr)
			}
			return
		}
		out := Append(nil, Struct, v)
		again, err := NewReader(out).Struct()
		if err != nil {
			t.Fatalf("written back, it does not read: %v", err)
		}
		if out2 := Append(nil, Struct, again); !bytes.Equal(out, out2) {
			t.Fatalf("written back twice, it differs: %x, %x", out, out2)
		}
	})
}
