package pages

import "encoding/binary"

// A data page v1 stores its repetition levels, then its definition levels, each in the
// encoding its header names (a column whose max level is 0 has none):
//
//   - RLE: a 4-byte little-endian length, then that many bytes of the RLE / bit-packed
//     hybrid (hybrid).
//   - BIT_PACKED (deprecated; parquet-mr's writers of Parquet 1.0): no length, the n
//     levels of the page packed back to back at the level's bit width, from the most
//     significant bit of each byte down (Encodings.md, "Bit-packed (Deprecated)"), so
//     ceil(n*width/8) bytes. That is the opposite bit order of the hybrid's bit-packed
//     runs. (arrow-go and Arrow C++ read it least significant bit first, against the
//     spec and parquet-mr: apache/arrow#42368. They agree with it only at width 0, which
//     is what parquet-mr writes for a required column's levels, and on levels whose bits
//     read the same either way.)
//
// Data pages v2 always use the hybrid, without a length.

// levelSection cuts the levels of a data page v1 (what: "repetition levels" or
// "definition levels") from the front of body, the page's n levels at width bits each:
// it returns them and the rest of the body, and whether they are BIT_PACKED.
func levelSection(body []byte, enc Encoding, what string, n int, width uint) (sec, rest []byte, packed bool, err error) {
	switch enc {
	case RLE:
		if len(body) < 4 {
			return nil, nil, false, corrupt("%s' length cut short", what)
		}
		l := binary.LittleEndian.Uint32(body)
		if uint64(l) > uint64(len(body)-4) {
			return nil, nil, false, corrupt("%s of %d bytes in a %d-byte page", what, l, len(body))
		}
		return body[4 : 4+l], body[4+l:], false, nil
	case BitPacked:
		l := (uint64(n)*uint64(width) + 7) / 8
		if l > uint64(len(body)) {
			return nil, nil, false, corrupt("%d BIT_PACKED %s of %d bits take %d bytes, the page has %d", n, what, width, l, len(body))
		}
		return body[:l], body[l:], true, nil
	}
	return nil, nil, false, unsupported("%s in %s", what, enc)
}

// resetLevels starts reading a page's n levels below max from sec, in the hybrid or,
// when packed, BIT_PACKED: then one run of n values, most significant bit first.
func (h *hybrid) resetLevels(sec []byte, packed bool, max uint32, n int) {
	h.reset(sec, bitWidth(max), max)
	if packed {
		h.msb, h.lit, h.pos = true, n, len(sec)
	}
}

// unpackMSB is unpack for BIT_PACKED levels: each value's bits from the most significant
// of a byte down. The section holds all of the page's values, so no read passes its end.
func (h *hybrid) unpackMSB(dst []uint32) error {
	w, bit := h.width, h.litBit
	var top uint32
	for k := range dst {
		at := bit / 8
		var x uint64
		if at+8 <= len(h.b) {
			x = binary.BigEndian.Uint64(h.b[at:])
		} else {
			for i := range 8 {
				x <<= 8
				if at+i < len(h.b) {
					x |= uint64(h.b[at+i])
				}
			}
		}
		v := uint32(x << (bit % 8) >> (64 - w)) // w is 16 at most; a shift by 64 gives 0
		dst[k] = v
		top = max(top, v)
		bit += int(w)
	}
	h.litBit = bit
	if top >= h.max {
		return corrupt("value %d is out of range (want below %d)", top, h.max)
	}
	return nil
}
