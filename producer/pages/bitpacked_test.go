package pages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The deprecated BIT_PACKED encoding of levels (levels.go): the spec's example, the
// decoder against a plain encoder of the spec's wording, and files whose data pages v1
// were rewritten as a Parquet 1.0 writer (parquet-mr) writes them, checked against the
// values written and, where the bit order cannot matter, against arrow-go.

// packMSB writes levels BIT_PACKED, one bit at a time from the most significant bit of
// each byte down, as Encodings.md describes it; independent of the decoder.
func packMSB(levels []uint32, width uint) []byte {
	out := make([]byte, (len(levels)*int(width)+7)/8)
	pos := 0
	for _, v := range levels {
		for j := int(width) - 1; j >= 0; j-- {
			out[pos/8] |= byte(v>>uint(j)&1) << (7 - pos%8)
			pos++
		}
	}
	return out
}

// Encodings.md: the numbers 0 through 7 at bit width 3 are the bytes 00000101 00111001
// 01110111.
func TestBitPackedSpecExample(t *testing.T) {
	want := []byte{0b00000101, 0b00111001, 0b01110111}
	vals := []uint32{0, 1, 2, 3, 4, 5, 6, 7}
	if got := packMSB(vals, 3); !bytes.Equal(got, want) {
		t.Fatalf("packMSB: %08b, want %08b", got, want)
	}
	var h hybrid
	h.resetLevels(want, true, 8, 8)
	got := make([]uint32, 8)
	if err := h.read(got); err != nil || !slices.Equal(got, vals) {
		t.Fatalf("read %v (%v), want %v", got, err, vals)
	}
	h.resetLevels(want, true, 8, 8)
	if err := h.read(make([]uint32, 9)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a ninth value: %v", err)
	}
	h.resetLevels(want, true, 7, 8) // max level 6: the 7 is out of range
	if err := h.read(got); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a level above the max: %v", err)
	}
}

// Levels of every width a column has, read in runs of many sizes as values and as null
// flags, equal the levels packMSB packed.
func TestBitPackedAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var scratch []uint32
	for _, maxLevel := range []uint32{1, 2, 3, 4, 7, 8, 200, 1 << 15} {
		width := bitWidth(maxLevel + 1)
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
			lv := make([]uint32, n)
			for i := range lv {
				lv[i] = uint32(rng.IntN(int(maxLevel) + 1))
				if rng.IntN(3) == 0 {
					lv[i] = maxLevel
				}
			}
			b := packMSB(lv, width)
			var h hybrid
			h.resetLevels(b, true, maxLevel+1, n)
			got := make([]uint32, n)
			for k := 0; k < n; {
				m := min(n-k, []int{1, 5, 64, 3, 100}[k%5])
				if err := h.read(got[k : k+m]); err != nil {
					t.Fatalf("max %d, %d levels: read at %d: %v", maxLevel, n, k, err)
				}
				k += m
			}
			if !slices.Equal(got, lv) {
				t.Fatalf("max %d, %d levels: read %v, want %v", maxLevel, n, got, lv)
			}
			h.resetLevels(b, true, maxLevel+1, n)
			null := make([]byte, n)
			nulls := 0
			for k := 0; k < n; {
				m := min(n-k, []int{3, 1, 17, 8, 200}[k%5])
				c, err := h.readNulls(null[k:k+m], maxLevel, &scratch)
				if err != nil {
					t.Fatalf("max %d, %d levels: readNulls at %d: %v", maxLevel, n, k, err)
				}
				nulls += c
				k += m
			}
			want := 0
			for i, l := range lv {
				if (l < maxLevel) != (null[i] == 1) {
					t.Fatalf("max %d, %d levels: level %d is %d, null flag %d", maxLevel, n, i, l, null[i])
				}
				if l < maxLevel {
					want++
				}
			}
			if nulls != want {
				t.Fatalf("max %d, %d levels: %d nulls counted, %d there", maxLevel, n, nulls, want)
			}
		}
	}
}

// toBitPacked rewrites the data pages v1 of a chunk as a Parquet 1.0 writer (parquet-mr)
// writes them: both level encodings in the header BIT_PACKED, the definition levels (if
// the column has any) packed most significant bit first, without a length.
func toBitPacked(t testing.TB, c Chunk, ps []page) []page {
	t.Helper()
	for i, p := range ps {
		if p.h.Type != DataPage {
			continue
		}
		p.h.DefEncoding, p.h.RepEncoding = BitPacked, BitPacked
		if c.MaxDef > 0 && p.h.NumValues > 0 {
			levels, values := openPage(t, c, p)
			packed := packMSB(levelsOf(c, p, levels), bitWidth(uint32(c.MaxDef)+1))
			p = setBody(t, c, p, append(packed, values...))
		}
		ps[i] = p
	}
	return ps
}

// mirrored are bytes whose bits read the same from either end.
var mirrored = []uint8{0x00, 0xff, 0x81, 0x18, 0x66, 0x99, 0x3c, 0xc3, 0xa5, 0x5a, 0x24, 0xdb, 0x42, 0xbd, 0xe7, 0x7e}

// mirroredOptional: definition levels (max 1) whose every 8 rows are one of mirrored.
func mirroredOptional(r int) int16 {
	return int16(mirrored[mix(uint64(r/8), 11)%uint64(len(mirrored))] >> (r % 8) & 1)
}

// mirroredNested: definition levels (max 2) that run a, b, b, a in every 4 rows, so that
// each byte of 2-bit levels reads the same from either end.
func mirroredNested(r int) int16 {
	h := mix(uint64(r/4), 12)
	if r%4 == 0 || r%4 == 3 {
		return int16(h % 3)
	}
	return int16(h >> 8 % 3)
}

// Files whose data pages v1 carry BIT_PACKED levels decode to the values written, every
// physical type, required, optional and a struct's leaf, dictionary on and off,
// compressed or not, and the footer's encodings for each chunk are Supported. Columns
// whose levels read the same in either bit order, and required ones, also equal what
// arrow-go reads from the same file (which reads BIT_PACKED least significant bit first:
// apache/arrow#42368).
func TestBitPackedFile(t *testing.T) {
	cols := allTypes()
	for _, ty := range []parquet.Type{parquet.Types.Boolean, parquet.Types.Int32, parquet.Types.Double,
		parquet.Types.ByteArray, parquet.Types.FixedLenByteArray} {
		cols = append(cols,
			tcol{name: ty.String() + "_mirrored", typ: ty, typeLen: 5, opt: true, levels: mirroredOptional},
			tcol{name: ty.String() + "_st", typ: ty, typeLen: 5, nested: true, levels: mirroredNested, distinct: 20})
	}
	rows := []int{640, 320} // pages of 64-row batches start on whole bytes of levels
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
		for _, dict := range []bool{false, true} {
			name := fmt.Sprintf("%s/dict=%v", codec, dict)
			t.Run(name, func(t *testing.T) {
				f := tfile{cols: cols, rows: rows, salt: uint64(len(name)), props: []parquet.WriterProperty{
					parquet.WithCompression(codec), parquet.WithDataPageVersion(parquet.DataPageV1),
					parquet.WithDictionaryDefault(dict), parquet.WithDictionaryPageSizeLimit(600),
					parquet.WithDataPageSize(256), parquet.WithBatchSize(64), parquet.WithStats(true)}}
				buf := rewriteFile(t, f.write(t), func(rg, col int, c Chunk, ps []page) []page {
					return toBitPacked(t, c, ps)
				}, BitPacked)
				checkBitPacked(t, f, buf)
			})
		}
	}
}

func checkBitPacked(t *testing.T, f tfile, buf []byte) {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	var d, di Decoder
	di.Indices = true
	packedPages := 0
	for j, c := range f.cols {
		var got, gotIdx, ref []cell
		for rg := range f.rows {
			ch := chunkOf(t, r, buf, rg, j)
			md, err := r.MetaData().RowGroup(rg).ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			if err := Supported(ch.Type, ch.MaxRep, md.Encodings()); err != nil {
				t.Fatalf("%s: encodings %v: %v", c.path(), md.Encodings(), err)
			}
			for _, p := range splitPages(t, ch.Data) {
				if p.h.Type == DataPage && p.h.DefEncoding == BitPacked && ch.MaxDef > 0 {
					packedPages++
				}
			}
			what := fmt.Sprintf("%s, row group %d", c.path(), rg)
			vals, _ := decodeAll(t, what, &d, ch, rg+j)
			idx, _ := decodeAll(t, what, &di, ch, rg+j+3)
			got, gotIdx = append(got, vals...), append(gotIdx, idx...)
			if c.levels != nil || c.maxDef() == 0 {
				refRG, err := reference(t, r, rg, j)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				ref = append(ref, refRG...)
			}
		}
		want := f.expected(c)
		sameCells(t, c.path()+": decoder against the values written", got, want)
		sameCells(t, c.path()+": decoder with Indices against the values written", gotIdx, want)
		if ref != nil {
			sameCells(t, c.path()+": arrow-go against the values written", ref, want)
		}
	}
	if packedPages < 50 {
		t.Fatalf("only %d data pages with BIT_PACKED definition levels", packedPages)
	}
}

// A list column's data pages v1 with both levels BIT_PACKED pass Check, which reads the
// repetition levels, then the definition levels, each at its own width; a level out of
// range or a section cut short fails it, naming the page.
// listChunk is the chunk of a list<int32> column (max repetition level 1, max definition
// level 3) that arrow-go writes in pages v1 of about 16 levels: rows of 0 to 4 elements,
// some null, null lists and empty ones.
func listChunk(t testing.TB) Chunk {
	t.Helper()
	list := schema.MustGroup(schema.ListOf(schema.NewInt32Node("element", parquet.Repetitions.Optional, -1),
		parquet.Repetitions.Optional, -1))
	root := schema.MustGroup(schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{list}, -1))
	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root, file.WithWriterProps(parquet.NewWriterProperties(
		parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(64), parquet.WithBatchSize(16))))
	rgw, err := w.AppendRowGroupChecked()
	if err != nil {
		t.Fatal(err)
	}
	cw, err := rgw.NextColumn()
	if err != nil {
		t.Fatal(err)
	}
	var defs, reps []int16
	var vals []int32
	for r := range 300 {
		h := mix(uint64(r), 21)
		switch n := int(h % 6); n {
		case 5:
			defs, reps = append(defs, 0), append(reps, 0) // null list
		case 0:
			defs, reps = append(defs, 1), append(reps, 0) // empty list
		default:
			for e := range n {
				d := int16(3)
				if h>>(8+e)&3 == 0 {
					d = 2 // null element
				} else {
					vals = append(vals, int32(h>>e))
				}
				defs, reps = append(defs, d), append(reps, int16(min(e, 1)))
			}
		}
	}
	if _, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(vals, defs, reps); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rgw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c := chunkOf(t, r, buf.Bytes(), 0, 0)
	if c.MaxRep != 1 || c.MaxDef != 3 {
		t.Fatalf("max levels %d, %d", c.MaxRep, c.MaxDef)
	}
	return c
}

// listLevels reads the repetition and definition levels of a list chunk's data page v1
// and returns them with the values that follow.
func listLevels(t testing.TB, c Chunk, p page) (rep, def []uint32, values []byte) {
	t.Helper()
	body := p.body
	var sec [2][]uint32
	for k, max := range []int16{c.MaxRep, c.MaxDef} {
		n := int(binary.LittleEndian.Uint32(body))
		var h hybrid
		h.reset(body[4:4+n], bitWidth(uint32(max)+1), uint32(max)+1)
		sec[k] = make([]uint32, p.h.NumValues)
		if err := h.read(sec[k]); err != nil {
			t.Fatal(err)
		}
		body = body[4+n:]
	}
	return sec[0], sec[1], body
}

func TestBitPackedRepeated(t *testing.T) {
	c := listChunk(t)
	// Each page's levels, read from the RLE sections arrow-go wrote, packed again.
	ps := splitPages(t, c.Data)
	var pageDefs [][]uint32
	for i, p := range ps {
		if p.h.Type != DataPage {
			continue
		}
		rep, def, values := listLevels(t, c, p)
		p.h.DefEncoding, p.h.RepEncoding = BitPacked, BitPacked
		ps[i] = setBody(t, c, p, slices.Concat(packMSB(rep, 1), packMSB(def, 2), values))
		pageDefs = append(pageDefs, def)
	}
	if len(pageDefs) < 5 {
		t.Fatalf("%d data pages, want several", len(pageDefs))
	}
	good := c
	good.Data = joinPages(ps)
	if err := Check(good); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// The levels checkLevels reads are the ones written, definition levels last.
	var d Decoder
	d.c = good
	k := 0
	for _, p := range ps {
		if p.h.Type != DataPage {
			continue
		}
		lv := make([]uint32, p.h.NumValues)
		if err := d.checkLevels(p.h, p.body, lv); err != nil || !slices.Equal(lv, pageDefs[k]) {
			t.Fatalf("data page %d: levels %v (%v), want %v", k, lv, err, pageDefs[k])
		}
		k++
	}
	// A page whose body ends inside its BIT_PACKED levels.
	at := slices.IndexFunc(ps, func(p page) bool { return p.h.Type == DataPage }) + 1
	ps[at] = setBody(t, c, ps[at], ps[at].body[:(ps[at].h.NumValues+7)/8+1])
	bad := c
	bad.Data = joinPages(ps)
	var pe *Error
	err := Check(bad)
	if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) || pe.Page != at || !strings.Contains(err.Error(), "BIT_PACKED definition levels") {
		t.Fatalf("a page cut in its levels: %v, want ErrCorrupt naming page %d", err, at)
	}
}

// Check refuses a list chunk's page whose repetition or definition levels hold more or
// fewer levels than its header's num_values, naming the page.
func TestCheckRepeatedLevelCounts(t *testing.T) {
	c := listChunk(t)
	if err := Check(c); err != nil {
		t.Fatalf("the chunk as written: %v", err)
	}
	rle := func(lv []uint32, width uint) []byte {
		b := oneRunEach(lv, width)
		return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(rep, def []uint32) ([]byte, []byte)
	}{
		{"repetition levels claim more", "repetition levels: 2 bytes of runs follow", func(rep, def []uint32) ([]byte, []byte) {
			return rle(append(rep, 0), 1), rle(def, 2)
		}},
		{"definition levels claim more", "definition levels: 2 bytes of runs follow", func(rep, def []uint32) ([]byte, []byte) {
			return rle(rep, 1), rle(append(def, 3), 2)
		}},
		{"repetition levels run out", "repetition levels: values run out", func(rep, def []uint32) ([]byte, []byte) {
			return rle(rep[1:], 1), rle(def, 2)
		}},
		{"definition levels run out", "definition levels: values run out", func(rep, def []uint32) ([]byte, []byte) {
			return rle(rep, 1), rle(def[1:], 2)
		}},
	} {
		ps := splitPages(t, c.Data)
		at := slices.IndexFunc(ps, func(p page) bool { return p.h.Type == DataPage }) + 2
		rep, def, values := listLevels(t, c, ps[at])
		r, d := tc.edit(rep, def)
		ps[at] = setBody(t, c, ps[at], slices.Concat(r, d, values))
		bad := c
		bad.Data = joinPages(ps)
		var pe *Error
		err := Check(bad)
		if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) || pe.Page != at || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCorrupt naming page %d and saying %q", tc.name, err, at, tc.want)
		}
	}
}
