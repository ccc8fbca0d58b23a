package pages

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/shmloader/shmloader/internal/testkit"
)

// The decoder against arrow-go as the reference: files written by arrow-go's writer in
// every layout the decoder reads are decoded chunk by chunk, in runs of many sizes, and
// every row's null flag and value must equal what arrow-go's ColumnChunkReader gives,
// which must in turn equal the values the test wrote.

// tcol is a column of a test file.
type tcol struct {
	name     string
	typ      parquet.Type
	typeLen  int
	opt      bool // optional (else required)
	nested   bool // the optional leaf x of an optional struct name (max definition level 2)
	nulls    int  // per mille of rows null
	distinct int  // values drawn from this many; 0: every row its own
	rle      bool // booleans in the RLE encoding
	// levels, when set, gives row r's definition level in place of nulls' draw.
	levels func(r int) int16
}

func (c tcol) path() string {
	if c.nested {
		return c.name + ".x"
	}
	return c.name
}

// cell is one row as a reader gives it, in a form == compares: bool, int32, int64,
// [12]byte, float bits (uint32, uint64) or string; nil for a null row.
type cell any

// mix is a cheap deterministic hash of a row and a salt.
func mix(x uint64, salt uint64) uint64 {
	x ^= salt * 0x9e3779b97f4a7c15
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

// def is row r's definition level in column c (its max when c is required).
func (c tcol) def(r int, salt uint64) int16 {
	h := mix(uint64(r), salt^0xdef)
	switch {
	case c.levels != nil:
		return c.levels(r)
	case c.nested:
		if int(h%1000) < c.nulls {
			return int16(h >> 20 % 2) // the struct null (0) or x null (1)
		}
		return 2
	case c.opt && int(h%1000) < c.nulls:
		return 0
	case c.opt:
		return 1
	}
	return 0
}

func (c tcol) maxDef() int16 {
	switch {
	case c.nested:
		return 2
	case c.opt:
		return 1
	}
	return 0
}

// value is row r's value in column c as a cell; a few floats are NaN, ±Inf or -0.
func (c tcol) value(r int, salt uint64) cell {
	k := uint64(r)
	if c.distinct > 0 {
		k = mix(uint64(r), salt) % uint64(c.distinct)
	}
	h := mix(k, salt^0x7a1)
	switch c.typ {
	case parquet.Types.Boolean:
		return h&1 == 1
	case parquet.Types.Int32:
		return int32(h)
	case parquet.Types.Int64:
		return int64(h)
	case parquet.Types.Int96:
		var v [12]byte
		binary.LittleEndian.PutUint64(v[:], h)
		binary.LittleEndian.PutUint32(v[8:], uint32(k))
		return v
	case parquet.Types.Float:
		return math.Float32bits(float32(specialFloat(k, h)))
	case parquet.Types.Double:
		return math.Float64bits(specialFloat(k, h))
	case parquet.Types.ByteArray:
		return fmt.Sprintf("%016x", h)[:k%17] // "" included
	case parquet.Types.FixedLenByteArray:
		b := make([]byte, c.typeLen)
		for i := range b {
			b[i] = byte(h >> (8 * (i % 8)))
		}
		b[0] = byte(k)
		return string(b)
	}
	panic("test: no value for " + c.typ.String())
}

func specialFloat(k, h uint64) float64 {
	switch k % 41 {
	case 1:
		return math.NaN()
	case 2:
		return math.Inf(1)
	case 3:
		return math.Inf(-1)
	case 4:
		return math.Copysign(0, -1)
	}
	return float64(int64(h>>11)) / (1 << 40)
}

// tfile is what to write: columns, row groups, and the writer's properties.
type tfile struct {
	cols  []tcol
	rows  []int // rows of each row group (0: an empty row group)
	props []parquet.WriterProperty
	salt  uint64
}

// expected is column c's rows as written: a cell per row, nil for null.
func (f tfile) expected(c tcol) []cell {
	var out []cell
	for _, n := range f.rows {
		for range n {
			r := len(out)
			if c.def(r, f.salt) < c.maxDef() {
				out = append(out, nil)
			} else {
				out = append(out, c.value(r, f.salt))
			}
		}
	}
	return out
}

func (f tfile) schema(t testing.TB) *schema.GroupNode {
	t.Helper()
	var fields schema.FieldList
	for _, c := range f.cols {
		rep := parquet.Repetitions.Required
		if c.opt || c.nested {
			rep = parquet.Repetitions.Optional
		}
		leafName := c.name
		if c.nested {
			leafName = "x"
		}
		n, err := schema.NewPrimitiveNode(leafName, rep, c.typ, -1, int32(c.typeLen))
		if err != nil {
			t.Fatal(err)
		}
		var node schema.Node = n
		if c.nested {
			if node, err = schema.NewGroupNode(c.name, parquet.Repetitions.Optional, schema.FieldList{n}, -1); err != nil {
				t.Fatal(err)
			}
		}
		fields = append(fields, node)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// write writes f with arrow-go's column writers and returns the file's bytes.
func (f tfile) write(t testing.TB) []byte {
	t.Helper()
	props := append([]parquet.WriterProperty(nil), f.props...)
	for _, c := range f.cols {
		props = append(props, parquet.WithDictionaryCostFallbackFor(c.path(), false))
		if c.rle {
			props = append(props, parquet.WithEncodingFor(c.path(), parquet.Encodings.RLE))
		}
	}
	RegisterCodecs() // for LZ4
	return testkit.ColumnBytes(t, f.schema(t), props, len(f.rows), func(g, col int, cw file.ColumnChunkWriter) error {
		c, n := f.cols[col], f.rows[g]
		first := 0
		for _, m := range f.rows[:g] {
			first += m
		}
		defs := make([]int16, 0, n)
		var vals []cell
		for r := first; r < first+n; r++ {
			d := c.def(r, f.salt)
			defs = append(defs, d)
			if d == c.maxDef() {
				vals = append(vals, c.value(r, f.salt))
			}
		}
		if c.maxDef() == 0 {
			defs = nil
		}
		return writeBatch(cw, vals, defs)
	})
}

func writeBatch(cw file.ColumnChunkWriter, vals []cell, defs []int16) error {
	var err error
	switch w := cw.(type) {
	case *file.BooleanColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) bool { return c.(bool) }), defs, nil)
	case *file.Int32ColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) int32 { return c.(int32) }), defs, nil)
	case *file.Int64ColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) int64 { return c.(int64) }), defs, nil)
	case *file.Int96ColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) parquet.Int96 { return c.([12]byte) }), defs, nil)
	case *file.Float32ColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) float32 { return math.Float32frombits(c.(uint32)) }), defs, nil)
	case *file.Float64ColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) float64 { return math.Float64frombits(c.(uint64)) }), defs, nil)
	case *file.ByteArrayColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) parquet.ByteArray { return parquet.ByteArray(c.(string)) }), defs, nil)
	case *file.FixedLenByteArrayColumnChunkWriter:
		_, err = w.WriteBatch(convert(vals, func(c cell) parquet.FixedLenByteArray { return parquet.FixedLenByteArray(c.(string)) }), defs, nil)
	default:
		return fmt.Errorf("no case for %T", cw)
	}
	return err
}

func convert[T any](vals []cell, f func(cell) T) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = f(v)
	}
	return out
}

// chunkOf is column j of row group rg of the file in buf as the decoder takes it.
func chunkOf(t testing.TB, r *file.Reader, buf []byte, rg, j int) Chunk {
	t.Helper()
	md, err := r.MetaData().RowGroup(rg).ColumnChunk(j)
	if err != nil {
		t.Fatal(err)
	}
	// arrow-go gives a chunk without data pages (an empty row group's) data page offset
	// 0, its dictionary page the right one.
	start, dict := md.DataPageOffset(), md.DictionaryPageOffset()
	if md.HasDictionaryPage() && dict > 0 && (dict < start || start < 4) {
		start = dict
	}
	col := r.MetaData().Schema.Column(j)
	end := start + md.TotalCompressedSize()
	c := Chunk{Type: col.PhysicalType(), TypeLen: col.TypeLength(), MaxDef: col.MaxDefinitionLevel(),
		MaxRep: col.MaxRepetitionLevel(), Codec: md.Compression(), Values: md.NumValues(), Data: buf[start:end:end]}
	// The footer's null count as the thrift holds it, as package dataset takes it.
	if st := r.MetaData().RowGroups[rg].Columns[j].MetaData.Statistics; st != nil && st.IsSetNullCount() {
		c.NullCount, c.HasNullCount = st.GetNullCount(), true
	}
	return c
}

// reference reads column j of row group rg with arrow-go's ColumnChunkReader.
func reference(t testing.TB, r *file.Reader, rg, j int) ([]cell, error) {
	t.Helper()
	cr, err := r.RowGroup(rg).Column(j)
	if err != nil {
		t.Fatal(err)
	}
	n := r.MetaData().RowGroup(rg).NumRows()
	maxDef := r.MetaData().Schema.Column(j).MaxDefinitionLevel()
	defs := make([]int16, n)
	var dense []cell
	var failed error
	read := func(f func(k int64) (int64, int, error)) {
		for got := int64(0); got < n; {
			total, _, err := f(got)
			if err != nil || total == 0 {
				failed = fmt.Errorf("arrow-go reader: %d rows, then %v", got, err)
				return
			}
			got += total
		}
	}
	switch cr := cr.(type) {
	case *file.BooleanColumnChunkReader:
		v := make([]bool, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, x)
			}
			return total, m, err
		})
	case *file.Int32ColumnChunkReader:
		v := make([]int32, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, x)
			}
			return total, m, err
		})
	case *file.Int64ColumnChunkReader:
		v := make([]int64, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, x)
			}
			return total, m, err
		})
	case *file.Int96ColumnChunkReader:
		v := make([]parquet.Int96, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, [12]byte(x))
			}
			return total, m, err
		})
	case *file.Float32ColumnChunkReader:
		v := make([]float32, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, math.Float32bits(x))
			}
			return total, m, err
		})
	case *file.Float64ColumnChunkReader:
		v := make([]float64, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, math.Float64bits(x))
			}
			return total, m, err
		})
	case *file.ByteArrayColumnChunkReader:
		v := make([]parquet.ByteArray, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, string(x))
			}
			return total, m, err
		})
	case *file.FixedLenByteArrayColumnChunkReader:
		v := make([]parquet.FixedLenByteArray, n)
		read(func(k int64) (int64, int, error) {
			total, m, err := cr.ReadBatch(n-k, v, defs[k:], nil)
			for _, x := range v[:m] {
				dense = append(dense, string(x))
			}
			return total, m, err
		})
	default:
		t.Fatalf("no reference reader for %T", cr)
	}
	if failed != nil {
		return nil, failed
	}
	out := make([]cell, n)
	k := 0
	for r := range out {
		if maxDef == 0 || defs[r] == maxDef {
			out[r] = dense[k]
			k++
		}
	}
	if k != len(dense) {
		t.Fatalf("arrow-go reader: %d values for %d defined rows", len(dense), k)
	}
	return out, nil
}

// valueAt is row k of v as a cell, nil when null; dictionary indices are looked up in
// dict, checking them against its size.
func valueAt(t testing.TB, typ physical, v *Values, k int, dict *Values) cell {
	if v.Null[k] == 1 {
		if v.Dict && v.Idx[k] != 0 || !v.Dict && !isZero(typ, v, k) {
			t.Errorf("null row %d does not hold the zero value", k)
		}
		return nil
	}
	if v.Null[k] != 0 {
		t.Fatalf("row %d: null flag %d", k, v.Null[k])
	}
	if v.Dict {
		i := int(v.Idx[k])
		if i >= dict.N {
			t.Fatalf("row %d: index %d into a dictionary of %d", k, i, dict.N)
		}
		v, k = dict, i
	}
	if v.Raw != nil {
		if v.HasNull || len(v.Raw) != v.N*width(typ, 0) {
			t.Fatalf("a raw run of %d bytes for %d rows of %v (nulls %v)", len(v.Raw), v.N, typ, v.HasNull)
		}
		switch typ {
		case tInt32:
			return int32(binary.LittleEndian.Uint32(v.Raw[4*k:]))
		case tInt64:
			return int64(binary.LittleEndian.Uint64(v.Raw[8*k:]))
		case tFloat:
			return math.Float32bits(math.Float32frombits(binary.LittleEndian.Uint32(v.Raw[4*k:])))
		case tDouble:
			return math.Float64bits(math.Float64frombits(binary.LittleEndian.Uint64(v.Raw[8*k:])))
		}
		t.Fatalf("a raw run of %v", typ)
	}
	switch typ {
	case tBool:
		if v.Bool[k] > 1 {
			t.Fatalf("row %d: boolean %d", k, v.Bool[k])
		}
		return v.Bool[k] == 1
	case tInt32:
		return v.I32[k]
	case tInt64:
		return v.I64[k]
	case tInt96:
		return [12]byte(v.I96[k])
	case tFloat:
		return math.Float32bits(v.F32[k])
	case tDouble:
		return math.Float64bits(v.F64[k])
	}
	return string(v.Bin[k])
}

func isZero(typ physical, v *Values, k int) bool {
	switch typ {
	case tBool:
		return v.Bool[k] == 0
	case tInt32:
		return v.I32[k] == 0
	case tInt64:
		return v.I64[k] == 0
	case tInt96:
		return v.I96[k] == Int96{}
	case tFloat:
		return math.Float32bits(v.F32[k]) == 0
	case tDouble:
		return math.Float64bits(v.F64[k]) == 0
	}
	return v.Bin[k] == nil
}

// runSizes are the row counts asked of Read in turn: single rows, odd sizes that cut
// runs of the level and index decoders anywhere, and more than any page holds.
var runSizes = []int{1, 7, 64, 3, 1000, 2, 100000, 13}

// decodeAll reads every row of c with d in runs of runSizes (from the one at start),
// checks each run's shape, and returns the rows; dictRuns counts runs given as indices.
func decodeAll(t testing.TB, what string, d *Decoder, c Chunk, start int) (rows []cell, dictRuns int) {
	t.Helper()
	if err := d.Reset(c); err != nil {
		t.Fatalf("%s: Reset: %v", what, err)
	}
	typ, _ := physicalOf(c.Type)
	var v Values
	for i := start; int64(len(rows)) < c.Values; i++ {
		want := runSizes[i%len(runSizes)]
		n, err := d.Read(want, &v)
		if err != nil {
			t.Fatalf("%s: Read after %d rows: %v", what, len(rows), err)
		}
		if n < 1 || n > want || int64(len(rows)+n) > c.Values || v.N != n {
			t.Fatalf("%s: Read(%d) after %d of %d rows gave %d (N %d)", what, want, len(rows), c.Values, n, v.N)
		}
		if v.Dict {
			dictRuns++
		}
		hasNull := false
		dict, _ := d.Dictionary()
		for k := range n {
			rows = append(rows, valueAt(t, typ, &v, k, dict))
			hasNull = hasNull || v.Null[k] == 1
		}
		if hasNull != v.HasNull {
			t.Fatalf("%s: run after %d rows: HasNull %v, nulls present %v", what, len(rows)-n, v.HasNull, hasNull)
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatalf("%s: Finish: %v", what, err)
	}
	return rows, dictRuns
}

// pageEncodings lists the value encodings of a chunk's data pages, and whether it has
// a dictionary page.
func pageEncodings(t testing.TB, data []byte) (encs []Encoding, dict bool) {
	for _, p := range splitPages(t, data) {
		switch p.h.Type {
		case DictionaryPage:
			dict = true
		case DataPage, DataPageV2:
			encs = append(encs, p.h.Encoding)
		}
	}
	return encs, dict
}

func sameCells(t testing.TB, what string, got, want []cell) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	bad := 0
	for r := range got {
		if got[r] != want[r] {
			if bad++; bad <= 5 {
				t.Errorf("%s: row %d is %#v, want %#v", what, r, got[r], want[r])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d rows differ", what, bad, len(got))
	}
}

// allTypes is one column of each physical type in each role: required with every row
// its own (a dictionary overflows), optional with some nulls from a few distinct values
// (a dictionary holds), optional with every row null; a struct's leaf; RLE booleans.
func allTypes() []tcol {
	types := []struct {
		t   parquet.Type
		len int
	}{{parquet.Types.Boolean, 0}, {parquet.Types.Int32, 0}, {parquet.Types.Int64, 0},
		{parquet.Types.Int96, 0}, {parquet.Types.Float, 0}, {parquet.Types.Double, 0},
		{parquet.Types.ByteArray, 0}, {parquet.Types.FixedLenByteArray, 5}}
	var cols []tcol
	for _, ty := range types {
		n := ty.t.String()
		cols = append(cols,
			tcol{name: n + "_req", typ: ty.t, typeLen: ty.len},
			tcol{name: n + "_some", typ: ty.t, typeLen: ty.len, opt: true, nulls: 200, distinct: 40},
			tcol{name: n + "_wide", typ: ty.t, typeLen: ty.len, opt: true, nulls: 100},
			tcol{name: n + "_all", typ: ty.t, typeLen: ty.len, opt: true, nulls: 1000})
	}
	return append(cols,
		tcol{name: "st", typ: parquet.Types.Int32, nested: true, nulls: 300, distinct: 30},
		tcol{name: "st_wide", typ: parquet.Types.ByteArray, nested: true, nulls: 300},
		tcol{name: "bool_rle", typ: parquet.Types.Boolean, rle: true},
		tcol{name: "bool_rle_opt", typ: parquet.Types.Boolean, rle: true, opt: true, nulls: 300})
}

var codecs = []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy,
	compress.Codecs.Zstd, compress.Codecs.Gzip, compress.Codecs.Brotli, compress.Codecs.Lz4Raw,
	compress.Codecs.Lz4}

// TestAgainstArrowGo: every physical type, required and optional, nulls none / some /
// all, dictionary off, on, and overflowing into PLAIN mid-chunk, data pages v1 and v2,
// every codec, many small pages, an empty row group, a struct's leaf; decoded as values
// and as dictionary indices by one Decoder reused across all chunks.
func TestAgainstArrowGo(t *testing.T) {
	rows := []int{700, 0, 250}
	for _, codec := range codecs {
		// Every type under two codecs; under the others, which differ only in how a
		// page body is decompressed, a few.
		cols := allTypes()
		if codec != compress.Codecs.Uncompressed && codec != compress.Codecs.Snappy {
			cols = slices.DeleteFunc(cols, func(c tcol) bool {
				return !slices.Contains([]parquet.Type{parquet.Types.Int32, parquet.Types.ByteArray}, c.typ)
			})
		}
		for _, v2 := range []bool{false, true} {
			for _, dict := range []bool{false, true} {
				name := fmt.Sprintf("%s/v2=%v/dict=%v", codec, v2, dict)
				t.Run(name, func(t *testing.T) {
					version := parquet.DataPageV1
					if v2 {
						version = parquet.DataPageV2
					}
					f := tfile{cols: cols, rows: rows, salt: uint64(len(name)), props: []parquet.WriterProperty{
						parquet.WithCompression(codec), parquet.WithDataPageVersion(version),
						parquet.WithDictionaryDefault(dict), parquet.WithDictionaryPageSizeLimit(600),
						parquet.WithDataPageSize(256), parquet.WithBatchSize(50), parquet.WithStats(dict)}}
					checkFile(t, f, func(c tcol, rows int64, encs []Encoding, hasDict bool) {
						checkLayout(t, c, rows, encs, hasDict, dict)
					})
				})
			}
		}
	}
	// Format version 1.0 writes dictionary pages' indices as PLAIN_DICTIONARY.
	t.Run("PLAIN_DICTIONARY", func(t *testing.T) {
		f := tfile{cols: allTypes(), rows: rows, salt: 99, props: []parquet.WriterProperty{
			parquet.WithVersion(parquet.V1_0), parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(600),
			parquet.WithDataPageSize(400), parquet.WithBatchSize(50)}}
		seen := false
		checkFile(t, f, func(c tcol, _ int64, encs []Encoding, hasDict bool) {
			for _, e := range encs {
				seen = seen || e == PlainDictionary
			}
		})
		if !seen {
			t.Fatal("no PLAIN_DICTIONARY page was written")
		}
	})
}

// checkLayout checks that a chunk has the layout the test means it to have, so that
// each layout is known to be covered.
func checkLayout(t *testing.T, c tcol, rows int64, encs []Encoding, hasDict, dict bool) {
	t.Helper()
	if len(encs) == 0 {
		return // an empty row group
	}
	if rows >= 500 && c.nulls < 1000 && len(encs) < 3 && c.typ != parquet.Types.Boolean {
		t.Errorf("%s: %d data pages, want many", c.path(), len(encs))
	}
	isDict := func(e Encoding) bool { return e == RLEDictionary || e == PlainDictionary }
	canDict := dict && c.typ != parquet.Types.Boolean && c.typ != parquet.Types.Int96
	switch {
	case !canDict:
		want := Plain
		if c.rle {
			want = RLE
		}
		for _, e := range encs {
			if e != want {
				t.Errorf("%s: a %s page, want %s only", c.path(), e, want)
			}
		}
	case c.nulls == 1000:
	case c.distinct > 0:
		if !hasDict || !isDict(encs[0]) || !isDict(encs[len(encs)-1]) {
			t.Errorf("%s: pages %v (dictionary page %v), want all dictionary-encoded", c.path(), encs, hasDict)
		}
	default:
		if !hasDict || !isDict(encs[0]) || encs[len(encs)-1] != Plain {
			t.Errorf("%s: pages %v (dictionary page %v), want dictionary-encoded, then PLAIN", c.path(), encs, hasDict)
		}
	}
}

// checkFile writes f, then checks each of its chunks against arrow-go's reader and the
// values written; layout sees each non-empty chunk's data page encodings.
func checkFile(t *testing.T, f tfile, layout func(c tcol, rows int64, encs []Encoding, hasDict bool)) {
	t.Helper()
	buf := f.write(t)
	r, err := file.NewParquetReader(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRowGroups() != len(f.rows) {
		t.Fatalf("%d row groups, want %d", r.NumRowGroups(), len(f.rows))
	}
	var d, di, dr Decoder
	di.Indices, dr.Raw = true, true
	for j, c := range f.cols {
		if got := r.MetaData().Schema.Column(j).Path(); got != c.path() {
			t.Fatalf("leaf %d is %s, want %s", j, got, c.path())
		}
		var got, gotIdx, ref []cell
		dictRuns := 0
		for rg := range f.rows {
			ch := chunkOf(t, r, buf, rg, j)
			if ch.MaxDef != c.maxDef() {
				t.Fatalf("%s: max definition level %d, want %d", c.path(), ch.MaxDef, c.maxDef())
			}
			what := fmt.Sprintf("%s, row group %d", c.path(), rg)
			vals, _ := decodeAll(t, what, &d, ch, rg+j)
			idx, n := decodeAll(t, what, &di, ch, rg+j+3)
			raw, _ := decodeAll(t, what, &dr, ch, rg+j+5)
			sameCells(t, what+": Raw against copied values", raw, vals)
			got, gotIdx, dictRuns = append(got, vals...), append(gotIdx, idx...), dictRuns+n
			refRG, err := reference(t, r, rg, j)
			if err != nil {
				// arrow-go's brotli refuses to decompress an empty values section into a
				// buffer it has used before: data page v2 of a column all null.
				if ch.Codec != compress.Codecs.Brotli || c.nulls != 1000 {
					t.Fatalf("%s, row group %d: %v", c.path(), rg, err)
				}
				refRG = f.expected(c)[len(ref) : len(ref)+int(ch.Values)]
			}
			ref = append(ref, refRG...)
			encs, hasDict := pageEncodings(t, ch.Data)
			if ch.Values > 0 && c.nulls < 1000 && hasDict != (n > 0) {
				t.Errorf("%s, row group %d: dictionary page %v, but %d runs of indices", c.path(), rg, hasDict, n)
			}
			layout(c, ch.Values, encs, hasDict)
		}
		sameCells(t, c.path()+": arrow-go against the values written", ref, f.expected(c))
		sameCells(t, c.path()+": decoder against arrow-go", got, ref)
		sameCells(t, c.path()+": decoder with Indices against arrow-go", gotIdx, ref)
	}
}

// TestAgainstPqarrow: a file pqarrow writes from Arrow types that map onto the physical
// types in other ways: INT96 timestamps, float16 as FIXED_LEN_BYTE_ARRAY(2), int8 and
// uint16 as INT32, a struct's fields, strings, with nulls and a dictionary overflow.
func TestAgainstPqarrow(t *testing.T) {
	buf := pqarrowFile(t, 3000, 700, compress.Codecs.Zstd, parquet.DataPageV2)
	r, err := file.NewParquetReader(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	var d, di, dr Decoder
	di.Indices, dr.Raw = true, true
	leaves := map[string]bool{}
	for j := range r.MetaData().Schema.NumColumns() {
		col := r.MetaData().Schema.Column(j)
		leaves[col.Path()+"/"+col.PhysicalType().String()] = true
		for rg := range r.NumRowGroups() {
			ch := chunkOf(t, r, buf, rg, j)
			what := fmt.Sprintf("%s, row group %d", col.Path(), rg)
			vals, _ := decodeAll(t, what, &d, ch, j)
			idx, _ := decodeAll(t, what, &di, ch, j+1)
			ref, err := reference(t, r, rg, j)
			if err != nil {
				t.Fatal(err)
			}
			sameCells(t, col.Path(), vals, ref)
			sameCells(t, col.Path()+" (indices)", idx, ref)
		}
	}
	for _, want := range []string{"ts/INT96", "st.x/INT32", "st.y/BYTE_ARRAY", "h/FIXED_LEN_BYTE_ARRAY", "i8/INT32", "u16/INT32"} {
		if !leaves[want] {
			t.Errorf("no leaf %s among %v", want, leaves)
		}
	}
}

// pqarrowFile writes rows rows with pqarrow in row groups of rgRows: ts (timestamp,
// stored as INT96), st (struct of x int32 and y string), h (float16), i8 (int8), u16
// (uint16), s (string, every row its own: its dictionary overflows); all with nulls.
func pqarrowFile(t testing.TB, rows, rgRows int, codec compress.Compression, version parquet.DataPageVersion) []byte {
	t.Helper()
	st := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ns, Nullable: true},
		{Name: "st", Type: st, Nullable: true},
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for r := range rows {
		h := mix(uint64(r), 5)
		null := h%5 == 0
		appendOr := func(fb array.Builder, f func()) {
			if null {
				fb.AppendNull()
			} else {
				f()
			}
		}
		ts := b.Field(0).(*array.TimestampBuilder)
		appendOr(ts, func() { ts.Append(arrow.Timestamp(int64(h >> 4))) })
		sb := b.Field(1).(*array.StructBuilder)
		if h%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(true)
			x, y := sb.FieldBuilder(0).(*array.Int32Builder), sb.FieldBuilder(1).(*array.StringBuilder)
			appendOr(x, func() { x.Append(int32(h % 50)) })
			appendOr(y, func() { y.Append(fmt.Sprint(h % 9)) })
		}
		f16 := b.Field(2).(*array.Float16Builder)
		appendOr(f16, func() { f16.Append(float16.New(float32(h%1000) / 8)) })
		i8 := b.Field(3).(*array.Int8Builder)
		appendOr(i8, func() { i8.Append(int8(h)) })
		b.Field(4).(*array.Uint16Builder).Append(uint16(h >> 8))
		s := b.Field(5).(*array.StringBuilder)
		appendOr(s, func() { s.Append(fmt.Sprintf("row %d %x", r, h)) })
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return testkit.ParquetBytes(t, rec, testkit.Parquet{
		Props: []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageVersion(version),
			parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(2000), parquet.WithDataPageSize(1000),
			parquet.WithBatchSize(100), parquet.WithMaxRowGroupLength(int64(rgRows))},
		Arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)},
	})
}

// TestHandBuiltDictionaries: arrow-go never dictionary-encodes BOOLEAN or INT96, but
// other writers may; chunks built here (a PLAIN dictionary page, then v1 and v2 data
// pages of indices with nulls) decode to the entries the indices name, as values and as
// indices.
func TestHandBuiltDictionaries(t *testing.T) {
	var i96 [3]Int96
	for k := range i96 {
		for b := range i96[k] {
			i96[k][b] = byte(k*31 + b)
		}
	}
	types := []struct {
		typ     parquet.Type
		plain   []byte // the dictionary's entries, PLAIN
		entries []cell
	}{
		{parquet.Types.Boolean, []byte{0b01}, []cell{true, false}},
		{parquet.Types.Int96, slices.Concat(i96[0][:], i96[1][:], i96[2][:]),
			[]cell{[12]byte(i96[0]), [12]byte(i96[1]), [12]byte(i96[2])}},
	}
	for _, ty := range types {
		for _, pt := range []PageType{DataPage, DataPageV2} {
			const rows = 50
			var levels, idx []uint32
			var want []cell
			for r := range rows {
				if r%5 == 0 {
					levels, want = append(levels, 0), append(want, nil)
					continue
				}
				i := uint32(r*7) % uint32(len(ty.entries))
				levels, idx, want = append(levels, 1), append(idx, i), append(want, ty.entries[i])
			}
			dict := page{h: Header{Type: DictionaryPage, NumValues: len(ty.entries), Encoding: Plain,
				Uncompressed: len(ty.plain), Compressed: len(ty.plain)}, body: ty.plain}
			data := page{h: Header{Type: pt, NumValues: rows, NumRows: rows, NumNulls: rows - len(idx),
				Encoding: RLEDictionary, DefEncoding: RLE, V2Compressed: false}}
			data = closePage(t, Chunk{MaxDef: 1}, data, oneRunEach(levels, 1), append([]byte{2}, oneRunEach(idx, 2)...))
			c := Chunk{Type: ty.typ, MaxDef: 1, Values: rows, Data: joinPages([]page{dict, data})}
			for _, indices := range []bool{false, true} {
				d := Decoder{Indices: indices}
				got, dictRuns := decodeAll(t, fmt.Sprintf("%s %s", ty.typ, pt), &d, c, 0)
				sameCells(t, fmt.Sprintf("%s %s, indices %v", ty.typ, pt, indices), got, want)
				if indices != (dictRuns > 0) {
					t.Errorf("%s %s, indices %v: %d runs of indices", ty.typ, pt, indices, dictRuns)
				}
			}
		}
	}
}
