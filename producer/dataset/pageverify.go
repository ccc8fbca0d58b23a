package dataset

import (
	"hash/crc32"

	"github.com/shmloader/shmloader/producer/pages"
)

// verifyPages checks the CRC of every page in a column chunk whose header has one. chunk
// is the chunk's bytes as stored, n of them per the footer; chunk may extend beyond n
// (arrow-go pads the range for files of old writers) and a last page may run into it.
func verifyPages(chunk []byte, n int) error {
	for pos := 0; pos < n; {
		h, err := pages.ParseHeader(chunk[pos:])
		if err != nil {
			return kindf(ErrCorrupt, "page header at chunk offset %d: %v", pos, err)
		}
		body := pos + h.Size
		if h.Compressed > len(chunk)-body {
			return kindf(ErrCorrupt, "page at chunk offset %d: %d-byte body runs past the chunk", pos, h.Compressed)
		}
		if h.HasCRC {
			if got := crc32.ChecksumIEEE(chunk[body : body+h.Compressed]); got != uint32(h.CRC) {
				return kindf(ErrChecksum, "page at chunk offset %d: page CRC %08x, computed %08x", pos, uint32(h.CRC), got)
			}
		}
		pos = body + h.Compressed
	}
	return nil
}
