package pages

import (
	"hash/crc32"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Chunk is one column chunk of one row group: where its bytes are and what the footer
// says about it.
type Chunk struct {
	Type    parquet.Type // physical type
	TypeLen int          // FIXED_LEN_BYTE_ARRAY's width
	MaxDef  int16
	MaxRep  int16
	Codec   compress.Compression
	Values  int64 // the footer's num_values: levels in all data pages
	// NullCount is the footer's statistics.null_count, when HasNullCount (and it is not
	// negative): the rows whose definition level is below MaxDef must be that many.
	NullCount    int64
	HasNullCount bool
	// Uncompressed is the footer's total_uncompressed_size (0: not known): no page may
	// decompress to more.
	Uncompressed int64
	Data         []byte // the chunk as stored: page headers and bodies, dictionary page first;
	// unchanged until the next Reset (byte arrays of an uncompressed chunk view it)
}

// Decoder reads the rows of one flat column chunk at a time. Reset starts a chunk; Read
// then yields its rows in order; Finish checks that the chunk ended where the footer
// says. A Decoder is used by one goroutine and keeps its buffers from chunk to chunk.
type Decoder struct {
	// Indices makes Read yield dictionary-encoded pages as indices (Values.Dict) into
	// Dictionary(), so a caller can transform each distinct value once.
	Indices bool
	// Raw lets Read yield a run of PLAIN INT32, INT64, FLOAT or DOUBLE values without
	// nulls as their bytes in the page (Values.Raw), instead of copying them.
	Raw bool

	c     Chunk
	typ   physical
	codec compress.Codec

	pos     int   // offset of the next page header
	page    int   // index of the current page
	pageAt  int   // offset of the current page's header
	started int64 // levels of the data pages started so far
	left    int   // rows left in the current data page
	nulls   int   // data page v2: nulls the header promises; -1 for v1
	seenNul int   // nulls met in the current page
	allNul  int64 // nulls met in the chunk's pages before the current one

	defs    hybrid
	levels  []uint32
	vals    valueReader
	dictEnc bool // the current page's values are dictionary indices

	dict    Values // entries in I32..Bin, N of them
	hasDict bool
	dictGen uint64

	pageBuf, dictBuf []byte
	plain            plainReader
	idx              dictReader
	bools            rleBoolReader
	deltas           deltaIntReader
	lengths          deltaLengthReader
	prefixes         deltaByteArrayReader
	split            bssReader
}

// valueReader decodes the values section of a data page.
type valueReader interface {
	// read decodes the next n values, densely, into out at [0:n] (indices into Idx).
	read(d *Decoder, out *Values, n int) error
	// finish checks, once the page's rows are read, that nothing is left over.
	finish() error
}

// Supported says whether a chunk of this column can be decoded here at all; the
// encodings are those the footer lists for the chunk.
func Supported(t parquet.Type, maxRep int16, encodings []parquet.Encoding) error {
	if maxRep > 0 {
		return unsupported("repeated column (max repetition level %d)", maxRep)
	}
	if _, ok := physicalOf(t); !ok {
		return unsupported("physical type %s", t)
	}
	for _, e := range encodings {
		if !encodingOK(Encoding(e), t) {
			return unsupported("%s encoding of %s", Encoding(e), t)
		}
	}
	return nil
}

// encodingOK: the encodings this decoder reads for a column of type t (levels: RLE and
// BIT_PACKED, which no page uses for values).
func encodingOK(e Encoding, t parquet.Type) bool {
	switch e {
	case Plain, PlainDictionary, RLEDictionary, RLE, BitPacked:
		return true
	case DeltaBinaryPacked:
		return t == parquet.Types.Int32 || t == parquet.Types.Int64
	case DeltaLengthByteArray:
		return t == parquet.Types.ByteArray
	case DeltaByteArray:
		return t == parquet.Types.ByteArray || t == parquet.Types.FixedLenByteArray
	case ByteStreamSplit:
		switch t {
		case parquet.Types.Float, parquet.Types.Double, parquet.Types.Int32, parquet.Types.Int64,
			parquet.Types.FixedLenByteArray:
			return true
		}
	}
	return false
}

// Reset starts decoding chunk c. It checks the chunk's description only; pages are
// checked as they are read.
func (d *Decoder) Reset(c Chunk) error {
	typ, ok := physicalOf(c.Type)
	if !ok || c.MaxRep > 0 {
		return &Error{Page: -1, Err: unsupported("physical type %s with max repetition level %d", c.Type, c.MaxRep)}
	}
	if typ == tFixed && c.TypeLen <= 0 {
		return &Error{Page: -1, Err: corrupt("FIXED_LEN_BYTE_ARRAY of width %d", c.TypeLen)}
	}
	if c.MaxDef < 0 || c.Values < 0 {
		return &Error{Page: -1, Err: corrupt("max definition level %d, %d values", c.MaxDef, c.Values)}
	}
	codec, err := codecOf(c)
	if err != nil {
		return &Error{Page: -1, Err: err}
	}
	d.c, d.typ, d.codec = c, typ, codec
	d.pos, d.page, d.pageAt, d.started, d.left, d.allNul, d.seenNul = 0, -1, 0, 0, 0, 0, 0
	d.hasDict, d.vals = false, nil
	d.dict.N = 0
	return nil
}

// Dictionary is the chunk's dictionary page, its entries in the slice of the physical
// type (N of them); Generation changes whenever another dictionary is loaded, so a
// caller may cache what it derived from one.
func (d *Decoder) Dictionary() (*Values, uint64) { return &d.dict, d.dictGen }

// fail wraps err with the current page.
func (d *Decoder) fail(err error) error {
	return &Error{Page: d.page, Offset: d.pageAt, Err: err}
}

// Read decodes up to n rows of the current page (the next page's, once the current
// one is done) into out, and returns how many: at least 1 while rows are left in the
// chunk, and never more than the page holds, so that one Values has one encoding.
func (d *Decoder) Read(n int, out *Values) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	if d.left == 0 {
		if err := d.nextDataPage(); err != nil {
			return 0, err
		}
	}
	m := min(n, d.left)
	out.grow(d.typ, m)
	out.N, out.HasNull, out.Dict, out.Raw = m, false, d.dictEnc && d.Indices, nil
	valid := m
	if d.c.MaxDef > 0 {
		nulls, err := d.defs.readNulls(out.Null[:m], uint32(d.c.MaxDef), &d.levels)
		if err != nil {
			return 0, d.fail(corrupt("definition levels: %v", err))
		}
		out.HasNull, valid = nulls > 0, m-nulls
		d.seenNul += nulls
	}
	if err := d.vals.read(d, out, valid); err != nil {
		return 0, d.fail(err)
	}
	if out.HasNull {
		spread(d.typ, out, m, valid)
	}
	d.left -= m
	if d.left == 0 {
		if err := d.endPage(); err != nil {
			return 0, err
		}
	}
	return m, nil
}

// endPage checks what the page's header promised against what it held.
func (d *Decoder) endPage() error {
	if d.c.MaxDef > 0 {
		if err := d.defs.end(); err != nil {
			return d.fail(corrupt("definition levels: %v", err))
		}
	}
	if d.nulls >= 0 && d.nulls != d.seenNul {
		return d.fail(corrupt("header says %d nulls, definition levels give %d", d.nulls, d.seenNul))
	}
	if err := d.vals.finish(); err != nil {
		return d.fail(err)
	}
	d.allNul += int64(d.seenNul)
	d.seenNul = 0
	return nil
}

// Finish checks, once every row was read, that the chunk holds no further data page and
// that its pages' levels add up to the footer's count.
func (d *Decoder) Finish() error {
	if d.left != 0 {
		return d.fail(corrupt("%d rows of the page were not read", d.left))
	}
	for d.pos < len(d.c.Data) {
		h, _, err := d.header()
		if err != nil {
			return err
		}
		if h.Type == DataPage || h.Type == DataPageV2 {
			if h.NumValues > 0 {
				return d.fail(corrupt("a data page of %d values follows the row group's last row", h.NumValues))
			}
		}
	}
	if d.started != d.c.Values {
		return &Error{Page: -1, Err: corrupt("data pages hold %d values, the footer says %d", d.started, d.c.Values)}
	}
	if d.c.HasNullCount && d.c.NullCount >= 0 && d.allNul != d.c.NullCount {
		return &Error{Page: -1, Err: corrupt("the definition levels give %d nulls, the footer's statistics %d", d.allNul, d.c.NullCount)}
	}
	return nil
}

// header parses the next page header and returns it with its body, and moves on.
func (d *Decoder) header() (Header, []byte, error) {
	d.page++
	d.pageAt = d.pos
	h, err := ParseHeader(d.c.Data[d.pos:])
	if err != nil {
		return h, nil, d.fail(err)
	}
	body := d.pos + h.Size
	if h.Compressed > len(d.c.Data)-body {
		return h, nil, d.fail(corrupt("%d-byte body runs past the chunk's end (%d bytes left)", h.Compressed, len(d.c.Data)-body))
	}
	d.pos = body + h.Compressed
	raw := d.c.Data[body:d.pos]
	if h.HasCRC && crc32.ChecksumIEEE(raw) != uint32(h.CRC) {
		return h, nil, d.fail(corrupt("page CRC %08x, computed %08x", uint32(h.CRC), crc32.ChecksumIEEE(raw)))
	}
	return h, raw, nil
}

// nextDataPage reads page headers up to the next data page, loading a dictionary page
// on the way, and sets up that page's levels and values.
func (d *Decoder) nextDataPage() error {
	for {
		if d.pos >= len(d.c.Data) {
			return &Error{Page: d.page + 1, Offset: d.pos, Err: corrupt("the chunk ends after %d of the footer's %d values", d.started, d.c.Values)}
		}
		h, raw, err := d.header()
		if err != nil {
			return err
		}
		switch h.Type {
		case DictionaryPage:
			if err := d.loadDict(h, raw); err != nil {
				return d.fail(err)
			}
		case DataPage, DataPageV2:
			if h.NumValues == 0 {
				continue // an empty page: nothing to read (pyarrow reads such files)
			}
			if err := d.startPage(h, raw); err != nil {
				return d.fail(err)
			}
			return nil
		}
	}
}

// startPage decompresses a data page and positions its level and value readers.
func (d *Decoder) startPage(h Header, raw []byte) error {
	if int64(h.NumValues) > d.c.Values-d.started {
		return corrupt("%d values, but only %d of the footer's %d are left", h.NumValues, d.c.Values-d.started, d.c.Values)
	}
	var levels, values []byte
	packed := false
	d.nulls, d.seenNul = -1, 0
	if h.Type == DataPage {
		body, err := d.decompress(&d.pageBuf, raw, h.Uncompressed)
		if err != nil {
			return err
		}
		values = body
		if d.c.MaxDef > 0 {
			levels, values, packed, err = levelSection(body, h.DefEncoding, "definition levels", h.NumValues, bitWidth(uint32(d.c.MaxDef)+1))
			if err != nil {
				return err
			}
		}
	} else {
		if h.NumRows != h.NumValues {
			return corrupt("%d rows but %d values in a flat column", h.NumRows, h.NumValues)
		}
		if h.NumNulls > h.NumValues {
			return corrupt("%d nulls in %d values", h.NumNulls, h.NumValues)
		}
		if h.RepLen != 0 {
			return corrupt("%d bytes of repetition levels in a flat column", h.RepLen)
		}
		if h.DefLen > len(raw) || h.DefLen > h.Uncompressed {
			return corrupt("%d bytes of definition levels in a %d-byte page", h.DefLen, len(raw))
		}
		if d.c.MaxDef == 0 && (h.DefLen != 0 || h.NumNulls > 0) {
			return corrupt("definition levels (%d bytes, %d nulls) in a required column", h.DefLen, h.NumNulls)
		}
		levels = raw[:h.DefLen]
		values = raw[h.DefLen:]
		if h.V2Compressed {
			var err error
			if values, err = d.decompress(&d.pageBuf, values, h.Uncompressed-h.DefLen); err != nil {
				return err
			}
		} else if len(values) != h.Uncompressed-h.DefLen {
			return corrupt("uncompressed values of %d bytes, header says %d", len(values), h.Uncompressed-h.DefLen)
		}
		if h.NumNulls > 0 { // without statistics arrow-go writes 0 (INT96 always) and parquet-java -1
			d.nulls = h.NumNulls
		}
	}
	if d.c.MaxDef > 0 {
		d.defs.resetLevels(levels, packed, uint32(d.c.MaxDef)+1, h.NumValues)
	}
	if err := d.startValues(h.Encoding, values, h.NumValues); err != nil {
		return err
	}
	d.started += int64(h.NumValues)
	d.left = h.NumValues
	return nil
}

// startValues picks the reader of the page's value encoding; the page has n rows.
func (d *Decoder) startValues(e Encoding, b []byte, n int) error {
	d.dictEnc = false
	switch {
	case e == Plain:
		d.plain.reset(b, d.typ, d.c.TypeLen)
		d.vals = &d.plain
	case e == PlainDictionary || e == RLEDictionary:
		if !d.hasDict {
			return corrupt("dictionary-encoded page, but the chunk has no dictionary page before it")
		}
		if err := d.idx.reset(b, d.dict.N); err != nil {
			return err
		}
		d.vals, d.dictEnc = &d.idx, true
	case e == RLE && d.typ == tBool:
		if err := d.bools.reset(b); err != nil {
			return err
		}
		d.vals = &d.bools
	case e == DeltaBinaryPacked && (d.typ == tInt32 || d.typ == tInt64):
		if err := d.deltas.reset(b, d.typ, n); err != nil {
			return err
		}
		d.vals = &d.deltas
	case e == DeltaLengthByteArray && d.typ == tByteArray:
		if err := d.lengths.reset(b, n); err != nil {
			return err
		}
		d.vals = &d.lengths
	case e == DeltaByteArray && (d.typ == tByteArray || d.typ == tFixed):
		typeLen := 0
		if d.typ == tFixed {
			typeLen = d.c.TypeLen
		}
		if err := d.prefixes.reset(b, typeLen, n); err != nil {
			return err
		}
		d.vals = &d.prefixes
	case e == ByteStreamSplit && (d.typ == tFloat || d.typ == tDouble || d.typ == tInt32 || d.typ == tInt64 || d.typ == tFixed):
		if err := d.split.reset(b, d.typ, d.c.TypeLen, n); err != nil {
			return err
		}
		d.vals = &d.split
	default:
		return unsupported("%s encoding of %s", e, d.c.Type)
	}
	return nil
}

// decompress returns the page body decompressed into *buf, checking its size.
func (d *Decoder) decompress(buf *[]byte, raw []byte, size int) ([]byte, error) {
	if d.c.Codec == compress.Codecs.Uncompressed {
		if len(raw) != size {
			return nil, corrupt("uncompressed page body of %d bytes, header says %d", len(raw), size)
		}
		return raw, nil
	}
	if size > 1<<31 {
		return nil, corrupt("page of %d bytes once decompressed", size)
	}
	if d.c.Uncompressed > 0 && int64(size) > d.c.Uncompressed {
		return nil, corrupt("page of %d bytes once decompressed, the footer says the chunk holds %d", size, d.c.Uncompressed)
	}
	if d.c.Uncompressed <= 0 && size > maxUnknownPage {
		return nil, corrupt("page of %d bytes once decompressed, in a chunk whose size the footer does not give (at most %d)", size, maxUnknownPage)
	}
	if err := CheckBody(d.c.Codec, raw, size); err != nil {
		return nil, err
	}
	*buf = growTo(*buf, max(size, 1))
	dst := (*buf)[:size]
	if size == 0 && d.c.Codec == compress.Codecs.Brotli {
		dst = (*buf)[:1] // arrow-go's brotli fails on an empty destination; one byte still bounds it
	}
	out, err := compress.Decode(d.codec, dst, raw)
	if err != nil {
		return nil, corrupt("%s: %v", d.c.Codec, err)
	}
	if len(out) != size {
		return nil, corrupt("%s: page decompressed to %d bytes, header says %d", d.c.Codec, len(out), size)
	}
	if cap(out) > cap(*buf) {
		*buf = out[:cap(out)]
	}
	return out, nil
}

// loadDict reads the dictionary page.
func (d *Decoder) loadDict(h Header, raw []byte) error {
	if d.hasDict || d.started > 0 {
		return corrupt("a second dictionary page, or one after data pages")
	}
	if h.Encoding != Plain && h.Encoding != PlainDictionary {
		return unsupported("dictionary page in %s", h.Encoding)
	}
	// A dictionary may hold more entries than the chunk has values: pyarrow writes a
	// categorical column's whole dictionary into every row group. Its size is bounded by
	// its body's, which the footer's chunk size bounds.
	body, err := d.decompress(&d.dictBuf, raw, h.Uncompressed)
	if err != nil {
		return err
	}
	if h.NumValues > maxValues(d.typ, d.c.TypeLen, len(body)) {
		return corrupt("dictionary of %d entries in %d bytes", h.NumValues, len(body))
	}
	var pr plainReader
	pr.reset(body, d.typ, d.c.TypeLen)
	d.dict.grow(d.typ, h.NumValues)
	if err := pr.read(nil, &d.dict, h.NumValues); err != nil { // nil: never Raw
		return corrupt("dictionary: %v", err)
	}
	if err := pr.finish(); err != nil {
		return corrupt("dictionary: %v", err)
	}
	d.dict.N, d.hasDict = h.NumValues, true
	d.dictGen++
	return nil
}

// maxUnknownPage bounds a page's decompressed size where the footer gives no chunk size
// to bound it by (writers cut pages near 1 MiB): the decoder sizes its buffer from the
// header before the body proves anything.
const maxUnknownPage = 256 << 20
