package cache

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// The entry header page; doc.go has the diagram.
const (
	entryMagic    = "SHMLCENT"
	FormatVersion = 2 // of the dir, its entries and manifests; any change of layout bumps it
	// v2: entries are checked with CRC-32 (IEEE) instead of CRC-32C

	headerSize = 4096
	align      = 64 // of every tensor region

	offMagic, offVersion, offHdrSize = 0, 8, 12
	offKey, offRows, offFileSize     = 16, 48, 56
	offCount, offCRC                 = 64, 68
	offConfigLen, offLabelLen        = 72, 74
	offTable                         = 128
	maxTensors                       = 192 // table: 16 bytes each, ends at 3200
	offStrings                       = 3200

	maxRegion    = 1 << 40 // bytes per tensor region
	maxEntrySize = 1 << 42 // bytes per entry file
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// layout is where each tensor region lies in an entry file.
type layout struct {
	offs, lens []int64
	size       int64 // file size: the end of the last region, at least the header page
}

// planLayout places regions of the given lengths after the header, each 64-byte aligned.
func planLayout(sizes []int64) (layout, error) {
	if len(sizes) > maxTensors {
		return layout{}, kindf(ErrBadSize, "%d tensors, at most %d", len(sizes), maxTensors)
	}
	l := layout{offs: make([]int64, len(sizes)), lens: make([]int64, len(sizes)), size: headerSize}
	for i, n := range sizes {
		if n < 0 || n > maxRegion {
			return layout{}, kindf(ErrBadSize, "tensor %d: %d bytes, want 0..%d", i, n, int64(maxRegion))
		}
		off := (l.size + align - 1) &^ (align - 1)
		l.offs[i], l.lens[i], l.size = off, n, off+n
	}
	if l.size > maxEntrySize {
		return layout{}, kindf(ErrBadSize, "entry of %d bytes, at most %d", l.size, int64(maxEntrySize))
	}
	return l, nil
}

// header is an entry file's first page, decoded.
type header struct {
	key           Key
	rows          int64
	config, label string
	lay           layout
	crc           uint32
}

// encode writes h into page (headerSize bytes), with the CRC field as h.crc.
func (h *header) encode(page []byte) {
	clear(page[:headerSize])
	le := binary.LittleEndian
	copy(page[offMagic:], entryMagic)
	le.PutUint32(page[offVersion:], FormatVersion)
	le.PutUint32(page[offHdrSize:], headerSize)
	copy(page[offKey:], h.key[:])
	le.PutUint64(page[offRows:], uint64(h.rows))
	le.PutUint64(page[offFileSize:], uint64(h.lay.size))
	le.PutUint32(page[offCount:], uint32(len(h.lay.offs)))
	le.PutUint32(page[offCRC:], h.crc)
	le.PutUint16(page[offConfigLen:], uint16(len(h.config)))
	le.PutUint16(page[offLabelLen:], uint16(len(h.label)))
	for i := range h.lay.offs {
		le.PutUint64(page[offTable+16*i:], uint64(h.lay.offs[i]))
		le.PutUint64(page[offTable+16*i+8:], uint64(h.lay.lens[i]))
	}
	copy(page[offStrings:], h.config)
	copy(page[offStrings+len(h.config):], h.label)
}

// parseHeader validates page as the header of a file of fileSize bytes. Every field is
// checked before it is used; the data checksum is not (see checksum).
func parseHeader(page []byte, fileSize int64) (header, error) {
	var h header
	le := binary.LittleEndian
	if len(page) < headerSize || fileSize < headerSize {
		return h, kindf(ErrBadSize, "file of %d bytes, shorter than the %d-byte header", fileSize, headerSize)
	}
	if !bytes.Equal(page[offMagic:offMagic+8], []byte(entryMagic)) {
		return h, kindf(ErrBadMagic, "magic %q, want %q", page[offMagic:offMagic+8], entryMagic)
	}
	if v := le.Uint32(page[offVersion:]); v != FormatVersion {
		return h, kindf(ErrVersion, "entry format version %d, this build reads %d", v, FormatVersion)
	}
	if n := le.Uint32(page[offHdrSize:]); n != headerSize {
		return h, kindf(ErrBadSize, "header size %d, want %d", n, headerSize)
	}
	copy(h.key[:], page[offKey:])
	h.rows = int64(le.Uint64(page[offRows:]))
	if h.rows < 0 {
		return h, kindf(ErrBadRecord, "rows %d", h.rows)
	}
	if n := le.Uint64(page[offFileSize:]); n != uint64(fileSize) {
		return h, kindf(ErrBadSize, "header says %d bytes, file has %d", n, fileSize)
	}
	n := le.Uint32(page[offCount:])
	if n > maxTensors {
		return h, kindf(ErrBadSize, "%d tensors, at most %d", n, maxTensors)
	}
	sizes := make([]int64, n)
	for i := range sizes {
		sizes[i] = int64(le.Uint64(page[offTable+16*i+8:]))
		if sizes[i] < 0 || sizes[i] > maxRegion {
			return h, kindf(ErrBadSize, "tensor %d: length %d", i, sizes[i])
		}
	}
	lay, err := planLayout(sizes)
	if err != nil {
		return h, err
	}
	// Offsets must be exactly where planLayout puts them: aligned, ordered, no overlap.
	for i := range sizes {
		if off := int64(le.Uint64(page[offTable+16*i:])); off != lay.offs[i] {
			return h, kindf(ErrBadOffset, "tensor %d at offset %d, want %d", i, off, lay.offs[i])
		}
	}
	if lay.size != fileSize {
		return h, kindf(ErrBadSize, "regions end at %d, file has %d bytes", lay.size, fileSize)
	}
	cl, ll := int(le.Uint16(page[offConfigLen:])), int(le.Uint16(page[offLabelLen:]))
	if cl > maxConfigLen || ll > maxLabelLen {
		return h, kindf(ErrBadSize, "meta strings of %d and %d bytes", cl, ll)
	}
	h.config = string(page[offStrings : offStrings+cl])
	h.label = string(page[offStrings+cl : offStrings+cl+ll])
	h.lay, h.crc = lay, le.Uint32(page[offCRC:])
	return h, nil
}

// checksum is the CRC-32 (IEEE) of the header page with its CRC field zeroed, then of
// each region in order (not the alignment padding). mem is the whole file, already
// validated. IEEE, not Castagnoli: Go computes it with carry-less multiplication at
// about 28 GB/s over mapped entries here, CRC-32C at 4 to 8 GB/s, and a fresh process
// checks every entry it serves once (it was over half of a warm epoch's CPU).
func checksum(mem []byte, lay layout) uint32 {
	var zero [4]byte
	c := crc32.Update(0, crc32.IEEETable, mem[:offCRC])
	c = crc32.Update(c, crc32.IEEETable, zero[:])
	c = crc32.Update(c, crc32.IEEETable, mem[offCRC+4:headerSize])
	for i, off := range lay.offs {
		c = crc32.Update(c, crc32.IEEETable, mem[off:off+lay.lens[i]])
	}
	return c
}

// views slices mem into one region per tensor, each capped so appends cannot spill.
func views(mem []byte, lay layout) [][]byte {
	v := make([][]byte, len(lay.offs))
	for i, off := range lay.offs {
		v[i] = mem[off : off+lay.lens[i] : off+lay.lens[i]]
	}
	return v
}
