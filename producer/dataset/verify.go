package dataset

import (
	"context"
	"errors"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"hash/crc32"
	"io"

	"github.com/shmloader/shmloader/producer/storage"
)

// checkedFile is the io.ReaderAt that arrow-go reads a file through. Before arrow-go sees
// the bytes of a column chunk it is about to decode, checkedFile verifies them: the chunk
// CRC from the footer (files written by `shmloader gen`) and the CRC of every page whose
// header has one (files of writers that set page CRCs). With BufferedStreamEnabled off,
// arrow-go reads each chunk with one ReadAt of exactly its footer range (plus padding
// for very old writers), which is what makes verifying there possible; Reader checks after
// each column that every expected chunk was verified, so a change in that read pattern
// fails loudly instead of skipping verification.
type checkedFile struct {
	f      *objectAt
	expect []expectChunk // chunks of the column being read
	failed error         // first verification failure since expect was set
	read   int64         // bytes read, for tests
	// checked counts the expected chunks read, their pages walked by verifyPages and
	// their bytes, failed ones included (Reader.Checked).
	checked Checked
}

type expectChunk struct {
	start, n int64
	codec    compress.Compression
	total    int64 // the footer's total_uncompressed_size
	sum      uint32
	hasSum   bool
	verified bool
}

func (c *checkedFile) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }

func (c *checkedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	c.read += int64(n)
	if err != nil && !(err == io.EOF && n == len(p)) {
		return n, err
	}
	for i := range c.expect {
		e := &c.expect[i]
		if e.start != off {
			continue
		}
		c.checked.Chunks++
		c.checked.Bytes += e.n
		if int64(len(p)) < e.n {
			// A partial read cannot be verified; refuse rather than decode unchecked bytes.
			return 0, c.fail(kindf(ErrCorrupt, "column chunk at offset %d read in part (%d of %d bytes): cannot verify", off, len(p), e.n))
		}
		if e.hasSum {
			if got := crc32.ChecksumIEEE(p[:e.n]); got != e.sum {
				return 0, c.fail(kindf(ErrChecksum, "column chunk at offset %d: footer CRC %08x, computed %08x", off, e.sum, got))
			}
		}
		walked, crcs, verr := verifyPages(p, int(e.n), e.codec, e.total)
		c.checked.Pages += int64(walked)
		c.checked.CRCPages += int64(crcs)
		if verr != nil {
			return 0, c.fail(verr)
		}
		dropEmptyPages(p, int(e.n))
		e.verified = true
	}
	return n, err
}

func (c *checkedFile) fail(err error) error {
	if c.failed == nil {
		c.failed = err
	}
	return err
}

// unverified returns an error if a chunk of the last column was decoded without being
// verified.
func (c *checkedFile) unverified() error {
	for _, e := range c.expect {
		if !e.verified {
			return kindf(ErrCorrupt, "column chunk at offset %d was not read in one piece, so it was not verified", e.start)
		}
	}
	return nil
}

// objectAt is an opened object as the io.ReaderAt and io.Seeker arrow-go reads through.
type objectAt struct {
	ctx  context.Context
	r    storage.Reader
	size int64
}

func (o *objectAt) ReadAt(p []byte, off int64) (int, error) {
	n := len(p)
	if off >= o.size {
		return 0, io.EOF
	}
	short := off+int64(n) > o.size
	if short {
		n = int(o.size - off)
	}
	if err := o.r.ReadAt(o.ctx, p[:n], off); err != nil {
		return 0, unwrapStorage(err)
	}
	if short {
		return n, io.EOF
	}
	return n, nil
}

func (o *objectAt) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		return off, nil
	case io.SeekEnd:
		return o.size + off, nil
	}
	return 0, errors.New("seek from the current offset is not supported")
}
