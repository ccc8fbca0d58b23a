package dataset

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/shmloader/shmloader/producer/pages"
)

// Every column chunk this package hands on is read by ReadChunks (chunks.go) and checked
// before anything decodes it: the chunk CRC from the footer (files of `shmloader gen`)
// there, and the page decoder checks each page as it reads it. A column arrow-go decodes
// (ReadRowGroup) is checked here first, by checkChunk: the chunk CRC, the CRC of every
// page whose header has one (files of writers that set page CRCs) and every page's
// header and sizes (verifyPages). arrow-go then reads the checked bytes from memory
// (chunkImage), never the file.

// Checked counts what ReadRowGroup has verified since the Reader was opened, before
// arrow-go decoded it: column chunks, their pages (and of those, the ones whose header
// carries a CRC) and their bytes as stored, those that failed included. (ReadChunks's
// chunks are not counted: their pages are checked by whoever decodes them.)
type Checked struct{ Chunks, Pages, CRCPages, Bytes int64 }

// Checked is what ReadRowGroup has verified so far.
func (r *Reader) Checked() Checked { return r.checked }

// checkChunk verifies chunk c, leaf l's in row group rg read from offset start: its
// footer CRC (when sums), then page by page, counting what it walked in r.checked. A chunk that passes has its pages of no values
// dropped (dropEmptyPages), which arrow-go would misread: it returns the chunk's length
// then.
func (r *Reader) checkChunk(rg int, l Leaf, c pages.Chunk, start int64, sums bool) (int, error) {
	data := c.Data
	r.checked.Chunks++
	r.checked.Bytes += int64(len(data))
	if sums {
		if err := r.chunkSum(rg, l, data, start); err != nil {
			return 0, err
		}
	}
	walked, crcs, err := verifyPages(data, len(data), c.Codec, c.Uncompressed)
	r.checked.Pages += int64(walked)
	r.checked.CRCPages += int64(crcs)
	if err != nil {
		return 0, err
	}
	return dropEmptyPages(data, len(data)), nil
}

// chunkImage is the file as arrow-go reads it: the column chunks of the column being
// decoded, already read and checked, served from memory. arrow-go reads a chunk with one
// ReadAt of its footer range (BufferedStreamEnabled off), plus up to 100 bytes of
// padding for files of old writers (IMPALA-694), which read as zeros here. Any other
// read is an error: arrow-go never sees a byte that was not checked.
type chunkImage struct {
	size   int64
	chunks []imageChunk
}

type imageChunk struct {
	start, size int64  // the footer's range
	data        []byte // its pages, the empty ones dropped: the rest reads as zeros
}

// maxPadding is the most arrow-go reads past a chunk's end (its maxDictHeaderSize).
const maxPadding = 100

func (m *chunkImage) ReadAt(p []byte, off int64) (int, error) {
	for _, c := range m.chunks {
		if off != c.start || int64(len(p)) < c.size || int64(len(p)) > c.size+maxPadding {
			continue
		}
		n := copy(p, c.data)
		clear(p[n:])
		return len(p), nil
	}
	return 0, fmt.Errorf("%d bytes at offset %d: not a column chunk read and checked for this read (%w)", len(p), off, errUnread)
}

var errUnread = errors.New("read outside the checked chunks")

func (m *chunkImage) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		return off, nil
	case io.SeekEnd:
		return m.size + off, nil
	}
	return 0, errors.New("seek from the current offset is not supported")
}

// chunkCRC checks data, a chunk read from offset start, against the footer's CRC want.
func chunkCRC(data []byte, start int64, want uint32) error {
	if got := crc32.ChecksumIEEE(data); got != want {
		return kindf(ErrChecksum, "column chunk at offset %d: footer CRC %08x, computed %08x", start, want, got)
	}
	return nil
}
