package pages

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/shmloader/shmloader/producer/internal/thrift"
)

// Test helpers that take chunks apart into pages and put them back together, so that
// tests can edit one field of a header or one byte of a body and keep the rest valid.

// thriftWriter writes the compact protocol: enough of it for page headers.
type thriftWriter struct {
	b    []byte
	last []int // last field id of each open struct
}

func (w *thriftWriter) field(id int, typ thrift.Type) {
	d := id - w.last[len(w.last)-1]
	if d > 0 && d <= 15 {
		w.b = append(w.b, byte(d<<4)|byte(typ))
	} else {
		w.b = append(w.b, byte(typ))
		w.b = binary.AppendUvarint(w.b, thrift.Zigzag32(int32(id)))
	}
	w.last[len(w.last)-1] = id
}

func (w *thriftWriter) i32(id int, v int) {
	w.field(id, thrift.I32)
	w.b = binary.AppendUvarint(w.b, thrift.Zigzag32(int32(v)))
}

func (w *thriftWriter) boolean(id int, v bool) {
	if v {
		w.field(id, thrift.True)
	} else {
		w.field(id, thrift.False)
	}
}

func (w *thriftWriter) begin(id int) {
	w.field(id, thrift.Struct)
	w.last = append(w.last, 0)
}

func (w *thriftWriter) end() {
	w.b = append(w.b, 0)
	w.last = w.last[:len(w.last)-1]
}

// encodeHeader writes h as a PageHeader with the nested headers named (5: data page,
// 7: dictionary page, 8: data page v2); none named: the one h.Type calls for.
func encodeHeader(h Header, nested ...int) []byte {
	if len(nested) == 0 {
		nested = []int{map[PageType]int{DataPage: 5, DictionaryPage: 7, DataPageV2: 8}[h.Type]}
	}
	w := &thriftWriter{last: []int{0}}
	w.i32(1, int(h.Type))
	w.i32(2, h.Uncompressed)
	w.i32(3, h.Compressed)
	if h.HasCRC {
		w.i32(4, int(h.CRC))
	}
	for _, n := range nested {
		switch n {
		case 5:
			w.begin(5)
			w.i32(1, h.NumValues)
			w.i32(2, int(h.Encoding))
			w.i32(3, int(h.DefEncoding))
			w.i32(4, int(h.RepEncoding))
			w.end()
		case 7:
			w.begin(7)
			w.i32(1, h.NumValues)
			w.i32(2, int(h.Encoding))
			w.end()
		case 8:
			w.begin(8)
			w.i32(1, h.NumValues)
			w.i32(2, h.NumNulls)
			w.i32(3, h.NumRows)
			w.i32(4, int(h.Encoding))
			w.i32(5, h.DefLen)
			w.i32(6, h.RepLen)
			w.boolean(7, h.V2Compressed)
			w.end()
		}
	}
	w.end()
	return w.b
}

// page is one page of a chunk: its header and its body as stored.
type page struct {
	h    Header
	body []byte
}

// splitPages takes chunk data apart into its pages.
func splitPages(t testing.TB, data []byte) []page {
	t.Helper()
	var ps []page
	for pos := 0; pos < len(data); {
		h, err := ParseHeader(data[pos:])
		if err != nil {
			t.Fatalf("page header at %d: %v", pos, err)
		}
		end := pos + h.Size + h.Compressed
		if end > len(data) {
			t.Fatalf("page at %d runs past the chunk", pos)
		}
		ps = append(ps, page{h, append([]byte(nil), data[pos+h.Size:end]...)})
		pos = end
	}
	return ps
}

// joinPages writes pages back into chunk data, each header re-encoded from its Header.
func joinPages(ps []page) []byte {
	var b []byte
	for _, p := range ps {
		b = append(b, encodeHeader(p.h)...)
		b = append(b, p.body...)
	}
	return b
}

func testCodec(t testing.TB, c compress.Compression) compress.Codec {
	t.Helper()
	codec, err := compress.GetCodec(c)
	if err != nil {
		t.Fatal(err)
	}
	return codec
}

// openPage returns a data page's definition levels (v1: without their length prefix;
// nil when the column has none) and values section, decompressed.
func openPage(t testing.TB, c Chunk, p page) (levels, values []byte) {
	t.Helper()
	codec := testCodec(t, c.Codec)
	decode := func(src []byte, size int) []byte {
		if c.Codec == compress.Codecs.Uncompressed {
			return append([]byte(nil), src...)
		}
		out, err := compress.Decode(codec, make([]byte, size), src)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if p.h.Type == DataPageV2 {
		levels = append([]byte(nil), p.body[:p.h.DefLen]...)
		values = p.body[p.h.DefLen:]
		if p.h.V2Compressed {
			values = decode(values, p.h.Uncompressed-p.h.DefLen)
		}
		return levels, append([]byte(nil), values...)
	}
	body := decode(p.body, p.h.Uncompressed)
	if c.MaxDef == 0 {
		return nil, body
	}
	n := binary.LittleEndian.Uint32(body)
	return body[4 : 4+n], body[4+n:]
}

// closePage is openPage's inverse: it builds p's body from levels and values and sets
// the sizes in its header to match.
func closePage(t testing.TB, c Chunk, p page, levels, values []byte) page {
	t.Helper()
	codec := testCodec(t, c.Codec)
	encode := func(src []byte) []byte {
		if c.Codec == compress.Codecs.Uncompressed {
			return src
		}
		return codec.Encode(nil, src)
	}
	if p.h.Type == DataPageV2 {
		p.h.DefLen = len(levels)
		p.h.Uncompressed = len(levels) + len(values)
		if p.h.V2Compressed {
			values = encode(values)
		}
		p.body = append(append([]byte(nil), levels...), values...)
		p.h.Compressed = len(p.body)
		return p
	}
	var raw []byte
	if c.MaxDef > 0 {
		raw = binary.LittleEndian.AppendUint32(raw, uint32(len(levels)))
		raw = append(raw, levels...)
	}
	return setBody(t, c, p, append(raw, values...))
}

// setBody makes raw, the decompressed body of a data page v1, p's body.
func setBody(t testing.TB, c Chunk, p page, raw []byte) page {
	t.Helper()
	p.h.Uncompressed = len(raw)
	p.body = raw
	if c.Codec != compress.Codecs.Uncompressed {
		p.body = testCodec(t, c.Codec).Encode(nil, raw)
	}
	p.h.Compressed = len(p.body)
	return p
}

// rleRun is one repeated run of the hybrid encoding: count copies of v, width bits wide.
func rleRun(count int, v uint32, width uint) []byte {
	b := binary.AppendUvarint(nil, uint64(count)<<1)
	for i := range int(width+7) / 8 {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// rewriteFile rebuilds the Parquet file buf with each column chunk's pages as edit
// leaves them (edit gets the chunk and its pages), and fixes the footer: the chunks'
// offsets and sizes, the row groups' sizes, and the encodings listed for each chunk,
// to which add are added. The file must have no page index or bloom filter (arrow-go
// writes none unless asked), whose offsets this does not move.
func rewriteFile(t testing.TB, buf []byte, edit func(rg, col int, c Chunk, ps []page) []page, add ...Encoding) []byte {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(buf[len(buf)-8:]))
	root, err := thrift.NewReader(buf[len(buf)-8-n : len(buf)-8]).Struct()
	if err != nil {
		t.Fatal(err)
	}
	out := []byte("PAR1")
	rgs := root.Field(4).Value.Items
	for rg := range rgs {
		rgv := &rgs[rg]
		ccs := rgv.Field(1).Value.Items
		var rgBytes, rgCompressed int64
		for col := range ccs {
			cc := &ccs[col]
			md := &cc.Field(3).Value
			for _, id := range []int16{4, 5, 6, 7} {
				if cc.Field(id) != nil {
					t.Fatal("rewriteFile: the file has a page index")
				}
			}
			if md.Field(14) != nil {
				t.Fatal("rewriteFile: the file has a bloom filter")
			}
			c := chunkOf(t, r, buf, rg, col)
			oldStart := i64Of(t, md, 9)
			if md.Field(11) != nil {
				oldStart = min(oldStart, i64Of(t, md, 11))
			}
			ps := edit(rg, col, c, splitPages(t, c.Data))
			start := int64(len(out))
			uncompressed, dataAt, pos := int64(0), int64(-1), start
			for _, p := range ps {
				hdr := int64(len(encodeHeader(p.h)))
				if dataAt < 0 && p.h.Type != DictionaryPage {
					dataAt = pos
				}
				uncompressed += hdr + int64(p.h.Uncompressed)
				pos += hdr + int64(len(p.body))
			}
			if md.Field(11) != nil {
				setI64(md, 11, start)
			}
			if dataAt >= 0 {
				setI64(md, 9, dataAt)
			}
			setI64(md, 6, uncompressed)
			setI64(md, 7, pos-start)
			if cc.Field(2) != nil {
				setI64(cc, 2, i64Of(t, cc, 2)+start-oldStart)
			}
			if col == 0 && rgv.Field(5) != nil {
				setI64(rgv, 5, start)
			}
			encs := &md.Field(2).Value
			for _, e := range add {
				encs.Items = append(encs.Items, thrift.Value{Raw: binary.AppendUvarint(nil, thrift.Zigzag32(int32(e)))})
			}
			rgBytes += uncompressed
			rgCompressed += pos - start
			out = append(out, joinPages(ps)...)
		}
		setI64(rgv, 2, rgBytes)
		if rgv.Field(6) != nil {
			setI64(rgv, 6, rgCompressed)
		}
	}
	foot := thrift.Append(nil, thrift.Struct, root)
	out = append(out, foot...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(foot)))
	return append(out, "PAR1"...)
}

// i64Of is i64 field id of struct v.
func i64Of(t testing.TB, v *thrift.Value, id int16) int64 {
	t.Helper()
	f := v.Field(id)
	if f == nil || f.Type != thrift.I64 {
		t.Fatalf("no i64 field %d", id)
	}
	u, _ := binary.Uvarint(f.Value.Raw)
	return int64(u>>1) ^ -int64(u&1)
}

// setI64 sets i64 field id of struct v, which must be there.
func setI64(v *thrift.Value, id int16, x int64) {
	v.Field(id).Value.Raw = binary.AppendUvarint(nil, uint64(x<<1^x>>63))
}
