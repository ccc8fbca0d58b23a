package pages

import (
	"encoding/binary"
	"math/bits"
)

// nullBytes[b] is the 8 null flags of a byte of bit-packed width-1 levels (a flat
// optional column, max definition level 1): flag i is 1 when bit i is 0.
var nullBytes = func() (t [256]uint64) {
	for b := range 256 {
		for i := range 8 {
			if b>>i&1 == 0 {
				t[b] |= 1 << (8 * i)
			}
		}
	}
	return t
}()

// nullBytesMSB is nullBytes for BIT_PACKED levels (levels.go), whose first level is the
// byte's most significant bit.
var nullBytesMSB = func() (t [256]uint64) {
	for b := range 256 {
		t[b] = nullBytes[bits.Reverse8(uint8(b))]
	}
	return t
}()

// readNulls reads len(null) definition levels of a column whose max level is max and
// sets null[k] to 1 where level k is below max; it returns how many are. Width-1 levels
// (max 1, the usual optional column) are turned into flags 8 at a time.
func (h *hybrid) readNulls(null []byte, max uint32, scratch *[]uint32) (int, error) {
	if h.width != 1 || max != 1 {
		*scratch = growTo(*scratch, len(null))
		lv := (*scratch)[:len(null)]
		if err := h.read(lv); err != nil {
			return 0, err
		}
		nulls := 0
		for k, l := range lv {
			b := byte(0)
			if l != max {
				b = 1
			}
			null[k] = b
			nulls += int(b)
		}
		return nulls, nil
	}
	h.done += len(null)
	nulls := 0
	for k := 0; k < len(null); {
		if h.rep == 0 && h.lit == 0 {
			if h.pos >= len(h.b) {
				return 0, corrupt("values run out after %d of %d", k, len(null))
			}
			if err := h.next(); err != nil {
				return 0, err
			}
		}
		if h.rep > 0 {
			m := min(h.rep, len(null)-k)
			flag := byte(1 - h.repVal)
			run := null[k : k+m]
			for i := range run {
				run[i] = flag
			}
			nulls += m * int(flag)
			h.rep -= m
			k += m
			continue
		}
		m := min(h.lit, len(null)-k)
		out, bit := null[k:k+m], h.litBit
		// The hybrid's runs start at bit 0 of a byte, BIT_PACKED levels at bit 7.
		flip, table := 0, &nullBytes
		if h.msb {
			flip, table = 7, &nullBytesMSB
		}
		i := 0
		for ; bit%8 != 0 && i < m; i++ {
			out[i] = 1 - h.b[bit/8]>>(bit%8^flip)&1
			nulls += int(out[i])
			bit++
		}
		for ; i+8 <= m; i += 8 {
			b := h.b[bit/8]
			binary.LittleEndian.PutUint64(out[i:], table[b])
			nulls += 8 - bits.OnesCount8(b)
			bit += 8
		}
		for ; i < m; i++ {
			out[i] = 1 - h.b[bit/8]>>(bit%8^flip)&1
			nulls += int(out[i])
			bit++
		}
		h.litBit = bit
		h.lit -= m
		k += m
	}
	return nulls, nil
}
