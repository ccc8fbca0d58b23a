package dataset

import (
	"hash/crc32"
)

// parsePageHeader decodes the page header at the start of b.
func parsePageHeader(b []byte) (pageHeader, error) {
	c := compact{b: b}
	var h pageHeader
	seen := 0
	for last := 0; ; {
		at := c.pos
		id, typ, err := c.fieldHeader(last)
		if err != nil {
			return h, err
		}
		if typ == ctStop {
			break
		}
		if id > 3 && h.restID == 0 {
			h.restAt, h.restID = at, id
		}
		if id >= 1 && id <= 4 {
			if typ != ctI32 {
				return h, errHeader
			}
			v, err := c.i32()
			if err != nil {
				return h, err
			}
			seen |= 1 << id
			switch id {
			case 3:
				h.compressed = int(v)
			case 4:
				h.crc, h.hasCRC = v, true
			}
		} else if err := c.skip(typ, 0); err != nil {
			return h, err
		}
		last = id
	}
	if seen&(1<<1|1<<2|1<<3) != 1<<1|1<<2|1<<3 || h.compressed < 0 {
		return h, errHeader
	}
	if h.restID == 0 {
		h.restAt = c.pos - 1 // the stop byte
	}
	h.size = c.pos
	return h, nil
}

// verifyPages checks the CRC of every page in a column chunk whose header has one. chunk
// is the chunk's bytes as stored, n of them per the footer; chunk may extend beyond n
// (arrow-go pads the range for files of old writers) and a last page may run into it.
func verifyPages(chunk []byte, n int) error {
	for pos := 0; pos < n; {
		h, err := parsePageHeader(chunk[pos:])
		if err != nil {
			return kindf(ErrCorrupt, "page header at chunk offset %d: %v", pos, err)
		}
		body := pos + h.size
		if h.compressed > len(chunk)-body {
			return kindf(ErrCorrupt, "page at chunk offset %d: %d-byte body runs past the chunk", pos, h.compressed)
		}
		if h.hasCRC {
			if got := crc32.ChecksumIEEE(chunk[body : body+h.compressed]); got != uint32(h.crc) {
				return kindf(ErrChecksum, "page at chunk offset %d: page CRC %08x, computed %08x", pos, uint32(h.crc), got)
			}
		}
		pos = body + h.compressed
	}
	return nil
}
