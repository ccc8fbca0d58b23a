package pages

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// hybrid reads the RLE / bit-packed hybrid encoding of levels and dictionary indices: a
// sequence of runs, each a ULEB128 header whose low bit says bit-packed (groups of 8
// values, width bits each, least significant bit first) or repeated (one value in
// ceil(width/8) bytes, little-endian). Every read is bounded by b; a run that ends early
// or a value of max or above is an error.
type hybrid struct {
	b     []byte
	pos   int
	width uint
	max   uint32 // values must be below max (levels: maxDef+1; indices: dictionary size)

	rep    int    // values left in the current repeated run
	repVal uint32 //
	lit    int    // values left in the current bit-packed run
	litBit int    // bit offset in b of the next bit-packed value
	msb    bool   // BIT_PACKED levels: one run, most significant bit first (levels.go)
	done   int    // values read since reset
}

func (h *hybrid) reset(b []byte, width uint, max uint32) {
	*h = hybrid{b: b, width: width, max: max}
}

// next starts the next run.
func (h *hybrid) next() error {
	hdr, n := binary.Uvarint(h.b[h.pos:])
	if n <= 0 {
		return corrupt("run header at byte %d of %d is cut short", h.pos, len(h.b))
	}
	h.pos += n
	if hdr&1 == 1 {
		groups := hdr >> 1
		if groups > 1<<28 { // more values than a page holds; and groups*8 must not overflow
			return corrupt("bit-packed run of %d groups at byte %d", groups, h.pos-n)
		}
		nbytes := groups * uint64(h.width)
		if groups == 0 || nbytes > uint64(len(h.b)-h.pos) {
			// The last run of a page may be cut where its values end: keep what is there.
			if groups == 0 || h.width == 0 {
				return corrupt("empty bit-packed run at byte %d", h.pos-n)
			}
			nbytes = uint64(len(h.b) - h.pos)
			h.lit = int(nbytes * 8 / uint64(h.width))
		} else {
			h.lit = int(groups * 8)
		}
		h.litBit = h.pos * 8
		h.pos += int(nbytes)
		if h.lit == 0 {
			return corrupt("bit-packed run at byte %d holds no whole value", h.pos-n)
		}
		return nil
	}
	count := hdr >> 1
	if count == 0 || count > 1<<31 {
		return corrupt("repeated run of %d values at byte %d", count, h.pos-n)
	}
	nb := int(h.width+7) / 8
	if nb > len(h.b)-h.pos {
		return corrupt("repeated run at byte %d is cut short", h.pos-n)
	}
	var v uint32
	for i := range nb {
		v |= uint32(h.b[h.pos+i]) << (8 * i)
	}
	h.pos += nb
	if v >= h.max {
		return corrupt("value %d at byte %d is out of range (want below %d)", v, h.pos-nb, h.max)
	}
	h.rep, h.repVal = int(count), v
	return nil
}

// read fills dst with the next len(dst) values.
func (h *hybrid) read(dst []uint32) error {
	h.done += len(dst)
	for k := 0; k < len(dst); {
		if h.rep == 0 && h.lit == 0 {
			if h.pos >= len(h.b) {
				return corrupt("values run out after %d of %d", k, len(dst))
			}
			if err := h.next(); err != nil {
				return err
			}
		}
		if h.rep > 0 {
			m := min(h.rep, len(dst)-k)
			v := h.repVal
			for i := range dst[k : k+m] {
				dst[k+i] = v
			}
			h.rep -= m
			k += m
			continue
		}
		m := min(h.lit, len(dst)-k)
		if err := h.unpack(dst[k : k+m]); err != nil {
			return err
		}
		h.lit -= m
		k += m
	}
	return nil
}

// unpack reads len(dst) bit-packed values from litBit on.
func (h *hybrid) unpack(dst []uint32) error {
	if h.msb {
		return h.unpackMSB(dst)
	}
	w := h.width
	mask := uint64(1)<<w - 1
	bit := h.litBit
	end := len(h.b) - 8 // a whole 8-byte load fits from here on
	var top uint32      // the largest value, checked once after the loop
	k := 0
	// Values whose 8-byte load stays inside b: counted first, so that the loop checks
	// nothing per value (w is at least 1 here: a width-0 run never reaches unpack with
	// bytes to read, and reads 0 below).
	fast := 0
	if end >= 0 && bit/8 <= end && w > 0 {
		fast = min(len(dst), (end*8-bit)/int(w)+1)
	}
	if fast > 0 {
		p := unsafe.Pointer(unsafe.SliceData(h.b))
		out := dst[:fast]
		for i := range out {
			v := uint32(binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, bit/8))[:]) >> (bit % 8) & mask)
			out[i] = v
			top = max(top, v)
			bit += int(w)
		}
		k = fast
	}
	for ; k < len(dst); k++ {
		var x uint64
		for i := 0; i < 8 && bit/8+i < len(h.b); i++ {
			x |= uint64(h.b[bit/8+i]) << (8 * i)
		}
		dst[k] = uint32(x >> (bit % 8) & mask)
		top = max(top, dst[k])
		bit += int(w)
	}
	h.litBit = bit
	if top >= h.max {
		return corrupt("value %d is out of range (want below %d)", top, h.max)
	}
	return nil
}

// end checks, once every value of a page was read, that the encoding holds no more: no
// repeated run goes on past them and no run follows. A writer that wrote more values
// than the header or the levels call for disagrees with them, and which of the two is
// right cannot be told. The last bit-packed run may hold more values than the page: its
// groups of 8 are padding, and writers pad by more than one group (DuckDB's runs end on
// a multiple of its own block), which every reader ignores.
func (h *hybrid) end() error {
	switch {
	case h.rep > 0:
		return corrupt("a repeated run holds %d more than the page's %d values", h.rep, h.done)
	case h.pos < len(h.b):
		return corrupt("%d bytes of runs follow the page's %d values", len(h.b)-h.pos, h.done)
	}
	return nil
}

// bitWidth is the width of values 0..max-1.
func bitWidth(max uint32) uint { return uint(bits.Len32(max - 1)) }
