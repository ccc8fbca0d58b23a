package dataset

import (
	"github.com/apache/arrow-go/v18/parquet/compress"
	"hash/crc32"

	"github.com/shmloader/shmloader/producer/pages"
)

// verifyPages checks the CRC of every page in a column chunk whose header has one, and
// that no page claims to decompress to more than the footer says the chunk holds (total,
// 0: unknown) or announces a larger body to its decoder (pages.CheckBody). chunk is the
// chunk's bytes as stored, n of them per the footer; chunk may extend beyond n (arrow-go
// pads the range for files of old writers) and a last page may run into it. It returns
// the number of pages it checked, the one at fault included, and how many of them carry
// a CRC.
func verifyPages(chunk []byte, n int, codec compress.Compression, total int64) (checked, crcs int, err error) {
	for pos := 0; pos < n; checked++ {
		h, err := pages.ParseHeader(chunk[pos:])
		if err != nil {
			return checked + 1, crcs, kindf(ErrCorrupt, "page header at chunk offset %d: %v", pos, err)
		}
		body := pos + h.Size
		if h.Compressed > len(chunk)-body {
			return checked + 1, crcs, kindf(ErrCorrupt, "page at chunk offset %d: %d-byte body runs past the chunk", pos, h.Compressed)
		}
		if total > 0 && int64(h.Uncompressed) > total {
			return checked + 1, crcs, kindf(ErrCorrupt, "page at chunk offset %d: %d bytes once decompressed, the footer says the chunk holds %d", pos, h.Uncompressed, total)
		}
		comp, size := chunk[body:body+h.Compressed], h.Uncompressed
		if h.Type == pages.DataPageV2 { // levels first, never compressed
			lv := h.DefLen + h.RepLen
			if !h.V2Compressed || lv > len(comp) || lv > size {
				comp = nil
			} else {
				comp, size = comp[lv:], size-lv
			}
		}
		if err := pages.CheckBody(codec, comp, size); comp != nil && err != nil {
			return checked + 1, crcs, kindf(ErrCorrupt, "page at chunk offset %d: %v", pos, err)
		}
		if h.HasCRC {
			crcs++
			if got := crc32.ChecksumIEEE(chunk[body : body+h.Compressed]); got != uint32(h.CRC) {
				return checked + 1, crcs, kindf(ErrChecksum, "page at chunk offset %d: page CRC %08x, computed %08x", pos, uint32(h.CRC), got)
			}
		}
		pos = body + h.Compressed
	}
	return checked, crcs, nil
}
