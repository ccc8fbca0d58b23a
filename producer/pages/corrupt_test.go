package pages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/klauspost/compress/s2"
)

// Corrupt chunks, one per check the decoder promises (doc.go): each is a real chunk
// written by arrow-go with one thing changed, and each must fail with an *Error that
// wraps ErrCorrupt and names the page at fault, without a panic and without serving a
// value of that page.

// baseCols are the columns of the base files: high-cardinality ints and strings with
// nulls (their dictionaries overflow into PLAIN), required ints, booleans PLAIN and RLE
// with nulls, a struct's leaf.
var baseCols = []tcol{
	{name: "i32", typ: parquet.Types.Int32, opt: true, nulls: 150},
	{name: "req", typ: parquet.Types.Int32},
	{name: "ba", typ: parquet.Types.ByteArray, opt: true, nulls: 150},
	{name: "bool", typ: parquet.Types.Boolean, opt: true, nulls: 150},
	{name: "rle", typ: parquet.Types.Boolean, opt: true, nulls: 150, rle: true},
	{name: "st", typ: parquet.Types.Int32, nested: true, nulls: 300, distinct: 20},
}

// baseFiles: data page v1 and v2, dictionary on (snappy) and off (uncompressed, zstd).
var baseFiles = map[string][]parquet.WriterProperty{
	"v1.snappy.dict": {parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true)},
	"v2.snappy.dict": {parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true),
		parquet.WithDataPageVersion(parquet.DataPageV2)},
	"v1.plain": {parquet.WithDictionaryDefault(false)},
	"v2.plain": {parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2)},
	"v2.zstd.plain": {parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false),
		parquet.WithDataPageVersion(parquet.DataPageV2)},
}

var (
	baseOnce   sync.Once
	baseChunks map[string]Chunk // "file/column"
)

// base returns the chunk "file/column" of the base files (600 rows, one row group,
// pages of about 256 bytes), written once per test binary.
func base(t testing.TB, key string) Chunk {
	t.Helper()
	baseOnce.Do(func() {
		baseChunks = map[string]Chunk{}
		for name, props := range baseFiles {
			props = append(props, parquet.WithDictionaryPageSizeLimit(400), parquet.WithDataPageSize(256),
				parquet.WithBatchSize(50))
			f := tfile{cols: baseCols, rows: []int{600}, props: props, salt: 7}
			buf := f.write(t)
			r, err := file.NewParquetReader(bytes.NewReader(buf))
			if err != nil {
				t.Fatal(err)
			}
			for j, c := range baseCols {
				baseChunks[name+"/"+c.name] = chunkOf(t, r, buf, 0, j)
			}
		}
	})
	c, ok := baseChunks[key]
	if !ok {
		t.Fatalf("no base chunk %s", key)
	}
	c.Data = append([]byte(nil), c.Data...)
	return c
}

// find returns the index of the first page of ps from index from on that ok accepts.
func find(t testing.TB, ps []page, from int, ok func(p page) bool) int {
	t.Helper()
	for i := from; i < len(ps); i++ {
		if ok(ps[i]) {
			return i
		}
	}
	t.Fatal("the base chunk has no such page")
	return -1
}

func isData(p page) bool { return p.h.Type == DataPage || p.h.Type == DataPageV2 }
func isDictData(p page) bool {
	return isData(p) && (p.h.Encoding == RLEDictionary || p.h.Encoding == PlainDictionary)
}
func isPlainData(p page) bool { return isData(p) && p.h.Encoding == Plain }

// startOf is the offset of page i's header in the chunk ps make.
func startOf(ps []page, i int) int { return len(joinPages(ps[:i])) }

// corruptCase is a base chunk changed: mutate returns the changed chunk and the index
// of the page the decoder must name.
type corruptCase struct {
	name, base string
	want       string // in the error's text
	mutate     func(t *testing.T, c Chunk, ps []page) (Chunk, int)
}

// edit returns a mutate that changes the pages only.
func edit(f func(t *testing.T, c Chunk, ps []page) ([]page, int)) func(*testing.T, Chunk, []page) (Chunk, int) {
	return func(t *testing.T, c Chunk, ps []page) (Chunk, int) {
		ps, at := f(t, c, ps)
		c.Data = joinPages(ps)
		return c, at
	}
}

// onPage returns a mutate that replaces the first page ok accepts with what f makes of
// it: one after page 0 when there is one, so that the pages before it are served.
func onPage(ok func(page) bool, f func(t *testing.T, c Chunk, p page) page) func(*testing.T, Chunk, []page) (Chunk, int) {
	return edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
		i := 1 + slices.IndexFunc(ps[1:], ok)
		if i == 0 {
			i = find(t, ps, 0, ok)
		}
		ps[i] = f(t, c, ps[i])
		return ps, i
	})
}

// onSections is onPage editing the decompressed levels and values of a data page.
func onSections(ok func(page) bool, f func(c Chunk, p page, levels, values []byte) ([]byte, []byte)) func(*testing.T, Chunk, []page) (Chunk, int) {
	return onPage(ok, func(t *testing.T, c Chunk, p page) page {
		levels, values := openPage(t, c, p)
		levels, values = f(c, p, levels, values)
		return closePage(t, c, p, levels, values)
	})
}

// onV1Body is onPage editing the whole decompressed body of a v1 data page.
func onV1Body(f func(body []byte) []byte) func(*testing.T, Chunk, []page) (Chunk, int) {
	return onPage(isData, func(t *testing.T, c Chunk, p page) page {
		body := p.body
		if c.Codec != compress.Codecs.Uncompressed {
			var err error
			if body, err = compress.Decode(testCodec(t, c.Codec), make([]byte, p.h.Uncompressed), p.body); err != nil {
				t.Fatal(err)
			}
		}
		body = f(append([]byte(nil), body...))
		p.h.Uncompressed = len(body)
		if c.Codec != compress.Codecs.Uncompressed {
			body = testCodec(t, c.Codec).Encode(nil, body)
		}
		p.body, p.h.Compressed = body, len(body)
		return p
	})
}

func dictWidth(n int) uint { return bitWidth(uint32(n)) + 1 }

// levelsOf decodes a data page's definition levels.
func levelsOf(c Chunk, p page, levels []byte) []uint32 {
	var h hybrid
	h.reset(levels, bitWidth(uint32(c.MaxDef)+1), uint32(c.MaxDef)+1)
	lv := make([]uint32, p.h.NumValues)
	if err := h.read(lv); err != nil {
		panic("test: the base page's levels: " + err.Error())
	}
	return lv
}

// oneRunEach encodes levels as one repeated run per value.
func oneRunEach(levels []uint32, width uint) []byte {
	var b []byte
	for _, l := range levels {
		b = append(b, rleRun(1, l, width)...)
	}
	return b
}

func corruptCases() []corruptCase {
	return []corruptCase{
		{"header cut short", "v1.snappy.dict/i32", "malformed page header", func(t *testing.T, c Chunk, ps []page) (Chunk, int) {
			c.Data = joinPages(ps)[:startOf(ps, 3)+4]
			return c, 3
		}},
		{"header of the last page cut short", "v2.plain/ba", "malformed page header", func(t *testing.T, c Chunk, ps []page) (Chunk, int) {
			c.Data = joinPages(ps)[:startOf(ps, len(ps)-1)+2]
			return c, len(ps) - 1
		}},
		{"body past the chunk's end", "v1.plain/req", "runs past the chunk's end", func(t *testing.T, c Chunk, ps []page) (Chunk, int) {
			c.Data = c.Data[:len(c.Data)-1]
			return c, len(ps) - 1
		}},
		{"body size past the chunk's end", "v2.snappy.dict/ba", "runs past the chunk's end", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			ps[2].h.Compressed += len(c.Data)
			return ps, 2
		})},
		{"snappy body one byte longer than the header says", "v1.snappy.dict/i32", "snappy block of", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.Uncompressed--
			return p
		})},
		{"snappy body one byte shorter than the header says", "v2.snappy.dict/ba", "snappy block of", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.Uncompressed++
			return p
		})},
		{"zstd values shorter than the header says", "v2.zstd.plain/i32", "ZSTD", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.Uncompressed += 3
			return p
		})},
		{"dictionary of more entries than its body holds", "v1.snappy.dict/ba", "entries in", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			ps[0].h.NumValues = int(c.Values) + 1
			return ps, 0
		})},
		{"snappy dictionary page size", "v1.snappy.dict/ba", "snappy block of", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			ps[0].h.Uncompressed++
			return ps, 0
		})},
		{"uncompressed body size", "v1.plain/i32", "uncompressed page body of", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.Uncompressed++
			return p
		})},
		{"v2 uncompressed values size", "v2.plain/req", "uncompressed values of", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.Uncompressed--
			return p
		})},
		{"data page values past the footer's count", "v1.snappy.dict/st", "are left", func(t *testing.T, c Chunk, ps []page) (Chunk, int) {
			c.Values--
			return c, len(ps) - 1
		}},
		{"a page's count past the footer's", "v2.plain/i32", "are left", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumValues += 1000
			p.h.NumRows += 1000
			return p
		})},
		{"chunk ends before the footer's count", "v1.plain/ba", "the chunk ends after", func(t *testing.T, c Chunk, ps []page) (Chunk, int) {
			c.Values += 5
			return c, len(ps)
		}},
		{"last data page missing", "v2.snappy.dict/i32", "the chunk ends after", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			return ps[:len(ps)-1], len(ps) - 1
		})},
		{"a data page after the last row", "v1.snappy.dict/i32", "follows the row group's last row", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			return append(ps, ps[len(ps)-1]), len(ps)
		})},
		{"a v2 data page after the last row", "v2.plain/st", "follows the row group's last row", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			return append(ps, ps[1]), len(ps)
		})},
		{"definition levels run out", "v1.snappy.dict/i32", "values run out", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return oneRunEach(levelsOf(c, p, levels)[:p.h.NumValues-1], 1), values
		})},
		{"v2 definition levels run out", "v2.plain/st", "values run out", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return oneRunEach(levelsOf(c, p, levels)[:p.h.NumValues-1], 2), values
		})},
		{"definition levels claim more: a repeated run past the page", "v1.snappy.dict/i32", "a repeated run holds 2 more than the page's", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			lv := levelsOf(c, p, levels)
			return append(oneRunEach(lv[:len(lv)-1], 1), rleRun(3, lv[len(lv)-1], 1)...), values
		})},
		{"definition levels claim more: a run after the page's", "v2.plain/st", "bytes of runs follow the page's", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return append(oneRunEach(levelsOf(c, p, levels), 2), rleRun(1, 2, 2)...), values
		})},
		{"BIT_PACKED definition levels cut short", "v1.plain/i32", "BIT_PACKED definition levels of 1 bits take", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			levels, _ := openPage(t, c, p)
			p.h.DefEncoding = BitPacked
			return setBody(t, c, p, packMSB(levelsOf(c, p, levels), 1)[:p.h.NumValues/8-1])
		})},
		{"dictionary indices claim more", "v1.snappy.dict/i32", "dictionary indices: 2 bytes of runs follow", onSections(isDictData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, append(values, rleRun(1, 0, uint(values[0]))...)
		})},
		{"RLE booleans claim more", "v2.plain/rle", "RLE booleans: a repeated run holds 5 more", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			valid := 0
			for _, l := range levelsOf(c, p, levels) {
				valid += int(l)
			}
			runs := append(oneRunEach(make([]uint32, valid-1), 1), rleRun(6, 1, 1)...)
			return levels, append(binary.LittleEndian.AppendUint32(nil, uint32(len(runs))), runs...)
		})},
		{"no definition levels", "v2.snappy.dict/ba", "definition levels", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return nil, values
		})},
		{"definition level above the max (repeated run)", "v1.plain/i32", "out of range", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			lv := levelsOf(c, p, levels)
			lv[len(lv)-1] = 2
			return oneRunEach(lv, 1), values
		})},
		{"definition level above the max (bit-packed)", "v2.snappy.dict/st", "out of range", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			groups := (p.h.NumValues + 7) / 8
			b := binary.AppendUvarint(nil, uint64(groups)<<1|1)
			b = append(b, 0xab) // 3, 2, 2, 2
			return append(b, bytes.Repeat([]byte{0xaa}, groups*2-1)...), values
		})},
		{"v1 levels' length past the page", "v1.snappy.dict/ba", "definition levels of", onV1Body(func(body []byte) []byte {
			binary.LittleEndian.PutUint32(body, uint32(len(body)-3))
			return body
		})},
		{"v1 levels' length cut short", "v1.plain/bool", "length cut short", onV1Body(func(body []byte) []byte {
			return body[:3]
		})},
		{"v2 levels past the page", "v2.plain/i32", "bytes of definition levels in", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.DefLen = len(p.body) + 1
			return p
		})},
		{"dictionary index past the dictionary (repeated run)", "v1.snappy.dict/i32", "out of range", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			i := find(t, ps, 1, isDictData)
			levels, _ := openPage(t, c, ps[i])
			w := dictWidth(ps[0].h.NumValues)
			ps[i] = closePage(t, c, ps[i], levels, append([]byte{byte(w)}, rleRun(ps[i].h.NumValues, uint32(ps[0].h.NumValues), w)...))
			return ps, i
		})},
		{"dictionary index past the dictionary (bit-packed)", "v2.snappy.dict/st", "out of range", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			i := find(t, ps, 1, isDictData)
			levels, _ := openPage(t, c, ps[i])
			vals := append([]byte{16}, binary.AppendUvarint(nil, uint64(ps[i].h.NumValues/8+1)<<1|1)...)
			vals = append(vals, bytes.Repeat([]byte{0xff}, (ps[i].h.NumValues/8+1)*16)...)
			ps[i] = closePage(t, c, ps[i], levels, vals)
			return ps, i
		})},
		{"bit-packed run of 2^60 groups at width 0", "v2.snappy.dict/st", "bit-packed run of", onSections(isDictData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, append([]byte{0}, binary.AppendUvarint(nil, 1<<61|1)...)
		})},
		{"dictionary index width above 32", "v1.snappy.dict/ba", "bit width", onSections(isDictData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			values[0] = 33
			return levels, values
		})},
		{"a second dictionary page", "v2.snappy.dict/ba", "a second dictionary page", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			return append([]page{ps[0], ps[0]}, ps[1:]...), 1
		})},
		{"a dictionary page after data pages", "v1.snappy.dict/st", "after data pages", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			return append([]page{ps[0], ps[1], ps[0]}, ps[2:]...), 2
		})},
		{"dictionary-encoded page without a dictionary", "v1.snappy.dict/i32", "no dictionary page", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			return ps[1:], 0
		})},
		{"dictionary page with more entries than bytes", "v2.snappy.dict/i32", "dictionary of", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			ps[0].h.NumValues = ps[0].h.Uncompressed/4 + 1
			return ps, 0
		})},
		{"dictionary page with bytes left over", "v1.snappy.dict/ba", "dictionary: PLAIN values end", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			ps[0].h.NumValues--
			return ps, 0
		})},
		{"PLAIN ints too short", "v1.plain/req", "PLAIN: ", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, values[:len(values)-1]
		})},
		{"PLAIN ints too long", "v2.zstd.plain/req", "PLAIN values end 4 bytes before", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, append(values, 1, 2, 3, 4)
		})},
		{"PLAIN byte arrays too short", "v2.plain/ba", "PLAIN byte array", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, values[:len(values)-1]
		})},
		{"PLAIN byte arrays too long", "v1.snappy.dict/ba", "PLAIN values end 1 bytes before", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, append(values, 0)
		})},
		{"PLAIN byte array length past the page", "v1.plain/ba", "PLAIN byte array", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			binary.LittleEndian.PutUint32(values, uint32(len(values)))
			return levels, values
		})},
		{"PLAIN booleans too short", "v1.plain/bool", "PLAIN booleans", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, values[:len(values)-1]
		})},
		{"PLAIN booleans too long", "v2.plain/bool", "PLAIN values end 1 bytes before", onSections(isPlainData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, append(values, 0)
		})},
		{"RLE booleans' length past the page", "v2.plain/rle", "RLE booleans", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			binary.LittleEndian.PutUint32(values, uint32(len(values)))
			return levels, values
		})},
		{"RLE booleans run out", "v1.plain/rle", "RLE booleans", onSections(isData, func(c Chunk, p page, levels, values []byte) ([]byte, []byte) {
			return levels, binary.LittleEndian.AppendUint32(nil, 0)
		})},
		{"v2 num_nulls above the levels' count", "v2.snappy.dict/i32", "nulls, definition levels give", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumNulls++
			return p
		})},
		{"v2 num_nulls below the levels' count", "v2.plain/ba", "nulls, definition levels give", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumNulls--
			if p.h.NumNulls <= 0 {
				t.Fatal("the base page has too few nulls")
			}
			return p
		})},
		{"v2 num_nulls above num_values", "v2.plain/st", "nulls in", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumNulls = p.h.NumValues + 1
			return p
		})},
		{"v2 nulls in a required column", "v2.plain/req", "in a required column", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumNulls = 1
			return p
		})},
		{"v2 num_rows above num_values", "v2.snappy.dict/st", "rows but", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumRows++
			return p
		})},
		{"v2 num_rows below num_values", "v2.plain/req", "rows but", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.NumRows--
			return p
		})},
		{"v2 repetition levels in a flat column", "v2.plain/i32", "repetition levels", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.RepLen = 1
			return p
		})},
		{"data page CRC", "v1.snappy.dict/ba", "page CRC", onPage(isData, func(t *testing.T, c Chunk, p page) page {
			p.h.HasCRC, p.h.CRC = true, int32(crc32.ChecksumIEEE(p.body)^1)
			return p
		})},
		{"dictionary page CRC", "v2.snappy.dict/st", "page CRC", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			ps[0].h.HasCRC, ps[0].h.CRC = true, int32(crc32.ChecksumIEEE(ps[0].body)+1)
			return ps, 0
		})},
		{"CRC of a page after the last row", "v2.plain/i32", "page CRC", edit(func(t *testing.T, c Chunk, ps []page) ([]page, int) {
			empty := page{h: Header{Type: DataPageV2, NumRows: 0, V2Compressed: false, HasCRC: true, CRC: 5}}
			return append(ps, empty), len(ps)
		})},
	}
}

func TestCorruptPages(t *testing.T) {
	var d Decoder // one Decoder for every case: a failed chunk leaves nothing behind
	for _, cc := range corruptCases() {
		t.Run(cc.name, func(t *testing.T) {
			good := base(t, cc.base)
			want, _ := decodeAll(t, "the base chunk", &d, good, 0)
			c, at := cc.mutate(t, good, splitPages(t, good.Data))
			before := valuesBefore(c.Data, at)
			for _, run := range []int{1 << 20, 1, 7, 100} {
				for _, indices := range []bool{false, true} {
					d.Indices = indices
					got, err := decodeUntilError(t, &d, c, run)
					what := fmt.Sprintf("runs of %d, indices %v", run, indices)
					var pe *Error
					switch {
					case err == nil:
						t.Fatalf("%s: no error; %d rows", what, len(got))
					case !errors.Is(err, ErrCorrupt) || !errors.As(err, &pe):
						t.Fatalf("%s: %v (%T), want an *Error wrapping ErrCorrupt", what, err, err)
					case pe.Page != at:
						t.Fatalf("%s: %v names page %d, want page %d", what, err, pe.Page, at)
					case pe.Page >= 0 && pe.Offset != startOfRaw(c.Data, at):
						t.Fatalf("%s: %v names offset %d, want %d", what, err, pe.Offset, startOfRaw(c.Data, at))
					case !strings.Contains(err.Error(), cc.want):
						t.Fatalf("%s: %q does not say %q", what, err, cc.want)
					}
					// Rows of the pages before the bad one are served as they were; in runs
					// of whole pages, none of the bad page.
					if run == 1<<20 && len(got) != before {
						t.Fatalf("%s: %d rows served, want the %d of the pages before page %d", what, len(got), before, at)
					}
					n := min(len(got), before)
					sameCells(t, what+": rows before the bad page", got[:n], want[:n])
				}
			}
			d.Indices = false
		})
	}
}

// decodeUntilError reads c in runs of run rows until an error or its end (Finish
// included) and returns the rows served, checking each run as decodeAll does.
func decodeUntilError(t testing.TB, d *Decoder, c Chunk, run int) ([]cell, error) {
	t.Helper()
	if err := d.Reset(c); err != nil {
		return nil, err
	}
	typ, _ := physicalOf(c.Type)
	var v Values
	var rows []cell
	for int64(len(rows)) < c.Values {
		n, err := d.Read(run, &v)
		if err != nil {
			return rows, err
		}
		if n < 1 || n > run || int64(len(rows)+n) > c.Values || v.N != n {
			t.Fatalf("Read(%d) after %d of %d rows gave %d (N %d)", run, len(rows), c.Values, n, v.N)
		}
		dict, _ := d.Dictionary()
		for k := range n {
			rows = append(rows, valueAt(t, typ, &v, k, dict))
		}
	}
	return rows, d.Finish()
}

// valuesBefore sums the values of the data pages before page at, reading headers
// leniently (the chunk is corrupt from page at on).
func valuesBefore(data []byte, at int) int {
	n := 0
	for i, pos := 0, 0; i < at && pos < len(data); i++ {
		h, err := ParseHeader(data[pos:])
		if err != nil {
			break
		}
		if h.Type == DataPage || h.Type == DataPageV2 {
			n += h.NumValues
		}
		pos += h.Size + h.Compressed
	}
	return n
}

// startOfRaw is the offset of page at's header in data (its end when there is none).
func startOfRaw(data []byte, at int) int {
	pos := 0
	for range at {
		h, err := ParseHeader(data[pos:])
		if err != nil {
			break
		}
		pos += h.Size + h.Compressed
	}
	return pos
}

// TestTolerated: what real writers do that looks odd but is valid is read as written:
// num_nulls 0 (arrow-go without statistics) or -1 (parquet-java without statistics),
// page CRCs that match, an empty data page, an index page, a dictionary page of no
// entries for a column all null.
func TestTolerated(t *testing.T) {
	var d Decoder
	cases := []struct {
		name, base string
		mutate     func(ps []page) []page
	}{
		{"num_nulls 0", "v2.snappy.dict/i32", func(ps []page) []page {
			for i := range ps {
				ps[i].h.NumNulls = 0
			}
			return ps
		}},
		{"num_nulls -1", "v2.plain/st", func(ps []page) []page {
			for i := range ps {
				ps[i].h.NumNulls = -1
			}
			return ps
		}},
		{"num_nulls -1, required", "v2.zstd.plain/req", func(ps []page) []page {
			for i := range ps {
				ps[i].h.NumNulls = -1
			}
			return ps
		}},
		{"CRCs", "v1.snappy.dict/ba", func(ps []page) []page {
			for i := range ps {
				ps[i].h.HasCRC, ps[i].h.CRC = true, int32(crc32.ChecksumIEEE(ps[i].body))
			}
			return ps
		}},
		{"empty data pages", "v1.plain/bool", func(ps []page) []page {
			empty := page{h: Header{Type: DataPage, DefEncoding: RLE}}
			return append(append([]page{empty}, ps...), empty)
		}},
		{"an index page", "v2.snappy.dict/st", func(ps []page) []page {
			idx := page{h: Header{Type: IndexPage, Uncompressed: 3, Compressed: 3}, body: []byte{1, 2, 3}}
			return append([]page{ps[0], idx}, ps[1:]...)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base(t, tc.base)
			want, _ := decodeAll(t, "the base chunk", &d, c, 0)
			c.Data = joinPages(tc.mutate(splitPages(t, c.Data)))
			got, _ := decodeAll(t, tc.name, &d, c, 1)
			sameCells(t, tc.name, got, want)
		})
	}
}

// A zstd frame that announces more bytes than its page header is refused before the
// zstd decoder allocates them: 17 bytes claiming 60 GiB used to end the process.
func TestZstdFrameLargerThanItsPage(t *testing.T) {
	body := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x00, 0, 0, 0, 0, 15, 0, 0, 0, 0x01, 0x00, 0x00}
	if n, ok := zstdContentSize(body); !ok || n != 60<<30 {
		t.Fatalf("content size %d, %v", n, ok)
	}
	err := CheckBody(compress.Codecs.Zstd, body, 4096)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "zstd frame of 64424509440 bytes") {
		t.Fatalf("got %v", err)
	}
	if err := CheckBody(compress.Codecs.Gzip, body, 4096); err != nil {
		t.Fatalf("a codec that names no size: %v", err)
	}
	snappy := s2.EncodeSnappy(nil, make([]byte, 4096))
	if err := CheckBody(compress.Codecs.Snappy, snappy, 4096); err != nil {
		t.Fatalf("snappy block of the header's size: %v", err)
	}
	if err := CheckBody(compress.Codecs.Snappy, snappy, 4095); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("snappy block of another size: %v", err)
	}
}

// The footer's null count is checked once the chunk is read: its definition levels must
// give that many nulls. A chunk whose footer gives none, or a negative one, is not
// checked; rows are served all the same, as the count is known only at the end.
func TestFooterNullCount(t *testing.T) {
	var d Decoder
	for _, key := range []string{"v1.snappy.dict/i32", "v2.plain/st", "v1.plain/req"} {
		c := base(t, key)
		rows, _ := decodeAll(t, key, &d, c, 0)
		nulls := int64(0)
		for _, r := range rows {
			if r == nil {
				nulls++
			}
		}
		for _, tc := range []struct {
			has  bool
			n    int64
			good bool
		}{{true, nulls, true}, {false, nulls + 1, true}, {true, -1, true}, {true, nulls + 1, false}, {true, nulls + 1000, false}} {
			c.HasNullCount, c.NullCount = tc.has, tc.n
			got, err := decodeUntilError(t, &d, c, 77)
			what := fmt.Sprintf("%s, footer null count %d (set %v)", key, tc.n, tc.has)
			var pe *Error
			switch {
			case tc.good && err != nil:
				t.Fatalf("%s: %v", what, err)
			case !tc.good && (!errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) || pe.Page != -1 ||
				!strings.Contains(err.Error(), fmt.Sprintf("give %d nulls, the footer's statistics %d", nulls, tc.n))):
				t.Fatalf("%s: %v, want ErrCorrupt for the chunk", what, err)
			}
			sameCells(t, what, got, rows)
		}
	}
}
