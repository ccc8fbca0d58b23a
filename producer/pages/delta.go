package pages

import (
	"encoding/binary"
	"math"
)

// deltaInts reads one DELTA_BINARY_PACKED stream: a header (values per block, miniblocks
// per block, value count, first value), then blocks, each a min delta, one bit width per
// miniblock and the miniblocks: every delta less the min delta, bit-packed least
// significant bit first. Sizes are ULEB128, values zigzag ULEB128.
//
// The last block holds only the miniblocks its values reach, each padded to full size;
// the widths of the others may be anything (the spec allows it, parquet-mr leaves them
// unset), so a width is checked when its miniblock is used. Sums wrap modulo 2^64, and
// an INT32 value is the low half, which is the spec's 32-bit wrapping arithmetic.
type deltaInts struct {
	b   []byte
	pos int  // next byte: the next miniblock or block header
	w32 bool // INT32 values (and byte array lengths): widths up to 32, first value and min deltas in int32 range

	total     int    // values the header announces
	left      int    // values not yet read
	last      uint64 // the value read last (before any: the first value)
	blockSize int
	miniSize  int // values per miniblock

	widths   []byte // the current block's miniblock widths, a view of b
	mini     int    // the current block's next miniblock
	minDelta uint64
	width    uint // the current miniblock's bit width
	bit      int  // bit offset in b of its next delta
	miniLeft int  // its deltas not yet read
}

// reset parses the stream's header and walks its blocks, checking every used width and
// that every miniblock lies within b; it returns the offset of the stream's end. The
// stream may announce at most most values. An empty b is a stream of no values (a page
// whose rows are all null may have no values section).
func (r *deltaInts) reset(b []byte, w32 bool, most int) (int, error) {
	*r = deltaInts{b: b, w32: w32}
	if len(b) == 0 {
		return 0, nil
	}
	blockSize, err := r.uvarint("block size")
	if err != nil {
		return 0, err
	}
	if blockSize == 0 || blockSize%128 != 0 {
		return 0, corrupt("DELTA_BINARY_PACKED: %d values per block, not a positive multiple of 128", blockSize)
	}
	if blockSize > math.MaxUint32 {
		return 0, corrupt("DELTA_BINARY_PACKED: blocks of %d values, over 2^32", blockSize)
	}
	minis, err := r.uvarint("miniblock count")
	if err != nil {
		return 0, err
	}
	if minis == 0 || blockSize%minis != 0 || blockSize/minis%32 != 0 {
		return 0, corrupt("DELTA_BINARY_PACKED: %d miniblocks in a block of %d values, not miniblocks of a multiple of 32", minis, blockSize)
	}
	total, err := r.uvarint("value count")
	if err != nil {
		return 0, err
	}
	if total > uint64(most) {
		return 0, corrupt("DELTA_BINARY_PACKED: %d values in a page of %d", total, most)
	}
	first, err := r.uvarint("first value")
	if err != nil {
		return 0, err
	}
	r.last = unzigzag(first)
	if w32 && int64(r.last) != int64(int32(r.last)) {
		return 0, corrupt("DELTA_BINARY_PACKED: first value %d is out of int32 range", int64(r.last))
	}
	r.blockSize, r.miniSize = int(blockSize), int(blockSize/minis)
	r.total, r.left = int(total), int(total)

	w := *r // a copy walks the blocks; r stays at the first one
	for deltas := max(w.total-1, 0); deltas > 0; {
		if err := w.block(); err != nil {
			return 0, err
		}
		n := min(deltas, w.blockSize)
		for range (n + w.miniSize - 1) / w.miniSize {
			if err := w.startMini(); err != nil {
				return 0, err
			}
		}
		deltas -= n
	}
	return w.pos, nil
}

// uvarint reads a ULEB128 field of the header or of a block header.
func (r *deltaInts) uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n == 0 {
		return 0, corrupt("DELTA_BINARY_PACKED: %s at byte %d is cut short", what, r.pos)
	}
	if n < 0 {
		return 0, corrupt("DELTA_BINARY_PACKED: %s at byte %d overflows 64 bits", what, r.pos)
	}
	r.pos += n
	return v, nil
}

func unzigzag(u uint64) uint64 { return u>>1 ^ -(u & 1) }

// block parses a block header: the min delta and the miniblocks' widths.
func (r *deltaInts) block() error {
	at := r.pos
	u, err := r.uvarint("min delta")
	if err != nil {
		return err
	}
	r.minDelta = unzigzag(u)
	if r.w32 && int64(r.minDelta) != int64(int32(r.minDelta)) {
		return corrupt("DELTA_BINARY_PACKED: min delta %d of the block at byte %d is out of int32 range", int64(r.minDelta), at)
	}
	m := r.blockSize / r.miniSize
	if m > len(r.b)-r.pos {
		return corrupt("DELTA_BINARY_PACKED: the %d bit widths of the block at byte %d are cut short", m, at)
	}
	r.widths = r.b[r.pos : r.pos+m]
	r.pos += m
	r.mini = 0
	return nil
}

// startMini starts the current block's next miniblock, which must lie within b.
func (r *deltaInts) startMini() error {
	w := uint(r.widths[r.mini])
	if w > 64 || r.w32 && w > 32 {
		limit := 64
		if r.w32 {
			limit = 32
		}
		return corrupt("DELTA_BINARY_PACKED: miniblock at byte %d has bit width %d, over %d", r.pos, w, limit)
	}
	size := r.miniSize / 8 * int(w) // miniSize is a multiple of 32: whole bytes
	if size > len(r.b)-r.pos {
		return corrupt("DELTA_BINARY_PACKED: miniblock of %d bytes at byte %d runs past the stream's end (%d bytes)", size, r.pos, len(r.b))
	}
	r.width, r.bit, r.miniLeft = w, r.pos*8, r.miniSize
	r.pos += size
	r.mini++
	return nil
}

// deltaRead reads the stream's next len(dst) values into dst.
func deltaRead[T int32 | int64](r *deltaInts, dst []T) error {
	if len(dst) > r.left {
		return corrupt("DELTA_BINARY_PACKED: %d values wanted, %d of the header's %d left", len(dst), r.left, r.total)
	}
	k := 0
	if len(dst) > 0 && r.left == r.total {
		dst[0] = T(r.last)
		k = 1
	}
	for k < len(dst) {
		if r.miniLeft == 0 {
			if r.mini == len(r.widths) {
				if err := r.block(); err != nil {
					return err
				}
			}
			if err := r.startMini(); err != nil {
				return err
			}
		}
		m := min(r.miniLeft, len(dst)-k)
		r.last = unpackDeltas(dst[k:k+m], r.b, r.bit, r.width, r.minDelta, r.last)
		r.bit += m * int(r.width)
		r.miniLeft -= m
		k += m
	}
	r.left -= len(dst)
	return nil
}

// unpackDeltas reads len(dst) deltas of w bits from bit `bit` of b on (the caller checked
// that they lie within b) and sets each dst[k] to the sum of last, the deltas so far and
// as many min deltas; it returns the last sum.
func unpackDeltas[T int32 | int64](dst []T, b []byte, bit int, w uint, minDelta, last uint64) uint64 {
	if w == 0 {
		for k := range dst {
			last += minDelta
			dst[k] = T(last)
		}
		return last
	}
	mask := uint64(1)<<w - 1 // w == 64: all ones
	k := 0
	if w <= 56 {
		// One 8-byte load holds a value wherever it starts in its first byte.
		for end := len(b) - 8; k < len(dst) && bit>>3 <= end; k++ {
			last += minDelta + binary.LittleEndian.Uint64(b[bit>>3:])>>(bit&7)&mask
			dst[k] = T(last)
			bit += int(w)
		}
	} else {
		// A value may reach into a ninth byte (a shift by 64 gives 0).
		for end := len(b) - 9; k < len(dst) && bit>>3 <= end; k++ {
			off, s := bit>>3, uint(bit&7)
			x := binary.LittleEndian.Uint64(b[off:])>>s | uint64(b[off+8])<<(64-s)
			last += minDelta + x&mask
			dst[k] = T(last)
			bit += int(w)
		}
	}
	for ; k < len(dst); k++ { // near b's end: a byte at a time
		off, s := bit>>3, uint(bit&7)
		x := uint64(b[off]) >> s
		for got := 8 - s; got < w; got += 8 {
			off++
			x |= uint64(b[off]) << got
		}
		last += minDelta + x&mask
		dst[k] = T(last)
		bit += int(w)
	}
	return last
}

// deltaIntReader reads INT32 and INT64 pages in DELTA_BINARY_PACKED: one stream that
// fills the values section exactly.
type deltaIntReader struct {
	s   deltaInts
	i32 bool
}

func (r *deltaIntReader) reset(b []byte, t physical, most int) error {
	r.i32 = t == tInt32
	end, err := r.s.reset(b, r.i32, most)
	if err != nil {
		return err
	}
	if end != len(b) {
		return corrupt("DELTA_BINARY_PACKED: values end at byte %d of a %d-byte values section", end, len(b))
	}
	return nil
}

func (r *deltaIntReader) read(_ *Decoder, out *Values, n int) error {
	if r.i32 {
		return deltaRead(&r.s, out.I32[:n])
	}
	return deltaRead(&r.s, out.I64[:n])
}

func (r *deltaIntReader) finish() error {
	if r.s.left != 0 {
		return corrupt("DELTA_BINARY_PACKED: the page's rows take %d of the header's %d values", r.s.total-r.s.left, r.s.total)
	}
	return nil
}
