package pages

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"

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
	raw = append(raw, values...)
	p.h.Uncompressed = len(raw)
	p.body = encode(raw)
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
