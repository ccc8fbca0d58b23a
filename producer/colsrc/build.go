package colsrc

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/shmloader/shmloader/producer/pages"
)

// ErrNoArray is the error of BuildArray for an Arrow type it does not build from the
// chunk's physical type.
var ErrNoArray = errors.New("cannot build the array")

// Builds says whether BuildArray builds arrays of Arrow type t from pages of physical
// type p (of width typeLen).
func Builds(t arrow.DataType, p parquet.Type, typeLen int) bool {
	_, err := newBuilder(t, p, typeLen, 0)
	return err == nil
}

// BuildArray decodes chunk c, a flat column chunk of rows rows, with dec (v is its
// scratch) into an Arrow array of type t: what arrow-go's pqarrow reader gives for the
// chunk, converted to t as package dataset converts a file's arrays to the dataset's
// types. It builds nulls, booleans, integers of every width from INT32 and INT64,
// float16 (FIXED_LEN_BYTE_ARRAY(2)), float32, float64, date32, date64 (from DATE days),
// time32, time64, timestamps (from INT64, and from INT96 as nanoseconds), durations,
// decimal128 and decimal256 (from INT32, INT64, FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY),
// string, large_string, binary, large_binary (several chunks where 32-bit offsets
// overflow), fixed_size_binary, and extension types of these (uuid); any other pair is
// ErrNoArray. Every value of the chunk is decoded and checked, and INT96 timestamps
// and stored decimals that arrow-go refuses are errors, as they are on ApplyRuns' road.
func BuildArray(dec *pages.Decoder, v *pages.Values, c pages.Chunk, t arrow.DataType, rows int) (*arrow.Chunked, error) {
	b, err := newBuilder(t, c.Type, c.TypeLen, rows)
	if err != nil {
		return nil, err
	}
	if b.width == 0 && b.offs != nil && c.Uncompressed > 0 {
		// The pages' bytes bound a plain chunk's values; a dictionary's grow as needed.
		b.data = make([]byte, 0, min(c.Uncompressed, math.MaxInt32))
	}
	if rows > 0 {
		if err := dec.Reset(c); err != nil {
			return nil, err
		}
		dec.Indices, dec.Raw = false, b.raw
		for row := 0; row < rows; {
			n, err := dec.Read(rows-row, v)
			if err != nil {
				return nil, err
			}
			if err := b.add(v, row, n); err != nil {
				return nil, err
			}
			row += n
		}
		if err := dec.Finish(); err != nil {
			return nil, err
		}
	}
	arrs := b.finish()
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	if ext, ok := t.(arrow.ExtensionType); ok {
		for i, a := range arrs {
			arrs[i] = array.NewExtensionArrayWithStorage(ext, a)
			a.Release()
		}
	}
	return arrow.NewChunked(t, arrs), nil
}

// builder makes one array (several for strings past 32-bit offsets) row by row.
type builder struct {
	typ   arrow.DataType // the storage type
	phys  parquet.Type
	rows  int
	width int    // bytes per fixed-width value (0: strings; -1: booleans)
	raw   bool   // Decoder.Raw: values as stored are the array's bytes
	vals  []byte // fixed-width values, or booleans' bits
	valid []byte // nil while no row is null
	nulls int

	// strings and binaries
	limit  int // bytes a 32-bit offsets array holds
	large  bool
	offs   []int64 // the current array's offsets, from 0
	data   []byte
	start  int // row of the current array's first row
	chunks []arrow.Array
}

func newBuilder(t arrow.DataType, p parquet.Type, typeLen, rows int) (*builder, error) {
	if ext, ok := t.(arrow.ExtensionType); ok {
		t = ext.StorageType()
	}
	b := &builder{typ: t, phys: p, rows: rows, limit: math.MaxInt32}
	ok := false
	i32, i64 := p == parquet.Types.Int32, p == parquet.Types.Int64
	switch t.ID() {
	case arrow.NULL:
		ok = true
	case arrow.BOOL:
		b.width, ok = -1, p == parquet.Types.Boolean
	case arrow.INT8, arrow.UINT8:
		b.width, ok = 1, i32 || i64
	case arrow.INT16, arrow.UINT16:
		b.width, ok = 2, i32 || i64
	case arrow.INT32, arrow.UINT32, arrow.DATE32, arrow.TIME32:
		b.width, ok, b.raw = 4, i32 || i64, i32
	case arrow.INT64, arrow.UINT64, arrow.TIME64, arrow.DURATION:
		b.width, ok, b.raw = 8, i32 || i64, i64
	case arrow.DATE64:
		b.width, ok, b.raw = 8, i32 || i64, i64
	case arrow.TIMESTAMP:
		b.width, b.raw = 8, i64
		ok = i64 || p == parquet.Types.Int96 && t.(*arrow.TimestampType).Unit == arrow.Nanosecond
	case arrow.FLOAT32:
		b.width, ok, b.raw = 4, p == parquet.Types.Float, true
	case arrow.FLOAT64:
		b.width, ok, b.raw = 8, p == parquet.Types.Double, true
	case arrow.FLOAT16:
		b.width, ok = 2, p == parquet.Types.FixedLenByteArray && typeLen == 2
	case arrow.DECIMAL128, arrow.DECIMAL256:
		b.width = 16
		if t.ID() == arrow.DECIMAL256 {
			b.width = 32
		}
		ok = i32 || i64 || p == parquet.Types.ByteArray || p == parquet.Types.FixedLenByteArray
	case arrow.FIXED_SIZE_BINARY:
		b.width = t.(*arrow.FixedSizeBinaryType).ByteWidth
		ok = p == parquet.Types.FixedLenByteArray && typeLen == b.width
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		b.large, ok = t.ID() == arrow.LARGE_STRING || t.ID() == arrow.LARGE_BINARY, p == parquet.Types.ByteArray
	}
	if !ok {
		return nil, fmt.Errorf("%w of %s from %s pages", ErrNoArray, t, p)
	}
	switch {
	case b.width > 0:
		b.vals = make([]byte, rows*b.width)
	case b.width < 0:
		b.vals = make([]byte, bitutil.BytesForBits(int64(rows)))
	case t.ID() != arrow.NULL:
		b.offs = make([]int64, 1, rows+1)
	}
	return b, nil
}

// add adds n rows of run v, the array's rows row.. .
func (b *builder) add(v *pages.Values, row, n int) error {
	if v.HasNull {
		b.addNulls(v.Null[:n], row)
	}
	if b.width == 0 {
		if b.typ.ID() != arrow.NULL {
			b.addBytes(v, row, n)
		}
		return nil
	}
	if b.width < 0 {
		for k, x := range v.Bool[:n] {
			if x != 0 {
				bitutil.SetBit(b.vals, row+k)
			}
		}
		return nil
	}
	out := b.vals[row*b.width : (row+n)*b.width]
	if v.Raw != nil {
		copy(out, v.Raw)
		return nil
	}
	switch id := b.typ.ID(); {
	case id == arrow.FLOAT32:
		copy(out, bytesOf(v.F32[:n]))
	case id == arrow.FLOAT64:
		copy(out, bytesOf(v.F64[:n]))
	case id == arrow.FLOAT16 || id == arrow.FIXED_SIZE_BINARY:
		for k, x := range v.Bin[:n] {
			copy(out[k*b.width:], x) // a null row's is empty
		}
	case id == arrow.DECIMAL128 || id == arrow.DECIMAL256:
		return b.addDecimals(v, row, n, out)
	case id == arrow.TIMESTAMP && b.phys == parquet.Types.Int96:
		o := castSlice[int64](out)
		for k, x := range v.I96[:n] {
			ns, ok := int96Nanos(x)
			if !ok && !b.isNull(v, k) {
				return fmt.Errorf("row %d: %w", row+k, valueErr(v, k, true, 0))
			}
			o[k] = ns
		}
	case id == arrow.DATE64 && b.phys == parquet.Types.Int32:
		o := castSlice[int64](out)
		for k, x := range v.I32[:n] {
			o[k] = int64(x) * 86400000
		}
	case b.phys == parquet.Types.Int32:
		putInts(out, b.width, v.I32[:n])
	default:
		putInts(out, b.width, v.I64[:n])
	}
	return nil
}

func (b *builder) isNull(v *pages.Values, k int) bool { return v.HasNull && v.Null[k] != 0 }

// addNulls marks the null rows of null (rows row..) in the validity bitmap.
func (b *builder) addNulls(null []byte, row int) {
	for k, x := range null {
		if x == 0 {
			continue
		}
		if b.valid == nil {
			b.valid = make([]byte, bitutil.BytesForBits(int64(b.rows)))
			bitutil.SetBitsTo(b.valid, 0, int64(b.rows), true)
		}
		bitutil.ClearBit(b.valid, row+k)
		b.nulls++
	}
}

// addDecimals converts n stored decimals to 16- or 32-byte little-endian two's
// complement values, as arrow-go does.
func (b *builder) addDecimals(v *pages.Values, row, n int, out []byte) error {
	words := b.width / 8
	o := castSlice[uint64](out)
	for k := range n {
		var x int64
		switch b.phys {
		case parquet.Types.Int32:
			x = int64(v.I32[k])
		case parquet.Types.Int64:
			x = v.I64[k]
		default:
			if b.isNull(v, k) {
				continue
			}
			if err := valueErr(v, k, false, b.width); err != nil {
				return fmt.Errorf("row %d: %w", row+k, err)
			}
			beToWords(v.Bin[k], o[k*words:(k+1)*words])
			continue
		}
		ext := uint64(x >> 63)
		o[k*words] = uint64(x)
		for w := 1; w < words; w++ {
			o[k*words+w] = ext
		}
	}
	return nil
}

// beToWords reads a big-endian two's complement integer into little-endian words,
// sign-extended.
func beToWords(be []byte, w []uint64) {
	ext := uint64(0)
	if int8(be[0]) < 0 {
		ext = math.MaxUint64
	}
	for i := range w {
		end := len(be) - 8*i
		if end <= 0 {
			w[i] = ext
			continue
		}
		v := ext
		for _, c := range be[max(end-8, 0):end] {
			v = v<<8 | uint64(c)
		}
		w[i] = v
	}
}

// addBytes appends n strings of run v; an array whose 32-bit offsets would overflow is
// closed and the next one begun.
func (b *builder) addBytes(v *pages.Values, row, n int) {
	for k, x := range v.Bin[:n] {
		if !b.large && len(b.data)+len(x) > b.limit {
			b.cut(row + k)
		}
		b.data = append(b.data, x...)
		b.offs = append(b.offs, int64(len(b.data)))
	}
}

// cut closes the strings' current array before row end.
func (b *builder) cut(end int) {
	b.chunks = append(b.chunks, b.bytesArray(end))
	b.start, b.offs, b.data = end, b.offs[:1], nil
}

// bytesArray is rows b.start..end-1 as a string or binary array.
func (b *builder) bytesArray(end int) arrow.Array {
	n := end - b.start
	var offs []byte
	if b.large {
		offs = bytesOf(append([]int64(nil), b.offs[:n+1]...))
	} else {
		o := make([]int32, n+1)
		for i, x := range b.offs[:n+1] {
			o[i] = int32(x)
		}
		offs = bytesOf(o)
	}
	valid, nulls := b.validity(b.start, end)
	d := array.NewData(b.typ, n, []*memory.Buffer{valid, memory.NewBufferBytes(offs), memory.NewBufferBytes(b.data)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// validity is the bitmap of rows lo..hi-1 and their nulls (nil, 0: none).
func (b *builder) validity(lo, hi int) (*memory.Buffer, int) {
	if b.valid == nil {
		return nil, 0
	}
	if lo == 0 && hi == b.rows {
		return memory.NewBufferBytes(b.valid), b.nulls
	}
	bm := make([]byte, bitutil.BytesForBits(int64(hi-lo)))
	bitutil.CopyBitmap(b.valid, lo, hi-lo, bm, 0)
	return memory.NewBufferBytes(bm), hi - lo - bitutil.CountSetBits(bm, 0, hi-lo)
}

// finish returns the arrays built.
func (b *builder) finish() []arrow.Array {
	switch {
	case b.typ.ID() == arrow.NULL:
		return []arrow.Array{array.NewNull(b.rows)}
	case b.width == 0:
		return append(b.chunks, b.bytesArray(b.rows))
	}
	valid, nulls := b.validity(0, b.rows)
	d := array.NewData(b.typ, b.rows, []*memory.Buffer{valid, memory.NewBufferBytes(b.vals)}, nil, nulls, 0)
	defer d.Release()
	return []arrow.Array{array.MakeFromData(d)}
}

// putInts stores each of vals in width bytes, little-endian: its low bytes, as Go's
// conversions to narrower integers keep them.
func putInts[T int32 | int64](out []byte, width int, vals []T) {
	switch width {
	case 1:
		for k, x := range vals {
			out[k] = byte(x)
		}
	case 2:
		o := castSlice[uint16](out)
		for k, x := range vals {
			o[k] = uint16(x)
		}
	case 4:
		o := castSlice[uint32](out)
		for k, x := range vals {
			o[k] = uint32(x)
		}
	default:
		o := castSlice[uint64](out)
		for k, x := range vals {
			o[k] = uint64(x)
		}
	}
}

// castSlice views b, whose length is a multiple of T's size, as []T; Arrow's buffers
// are little-endian, as the machines this runs on are.
func castSlice[T any](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
}

// bytesOf views s as its bytes.
func bytesOf[T any](s []T) []byte {
	var z T
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
