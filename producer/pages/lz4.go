package pages

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// Parquet's LZ4 codec (CompressionCodec 5, deprecated in favour of LZ4_RAW) never said how
// its bytes are framed, and writers disagree: Hadoop's Lz4Codec (parquet-mr, and Arrow C++
// since 2.0) prefixes each raw LZ4 block with its sizes; parquet-cpp before that wrote one
// bare raw block; some old writers wrote an LZ4 frame. arrow-go therefore leaves the codec
// out. This file reads all three, in the order Arrow C++'s Lz4HadoopCodec::Decompress
// tries the first two (cpp/src/arrow/util/compression_lz4.cc), so that shmloader reads
// what pyarrow reads; the frame comes last, as arrow-rs's LZ4HadoopCodec also tries it.
//
// Hadoop framing: the page body is one or more blocks, each
//
//	+------------------+------------------+---------------------------+
//	| decompressed u32 | compressed u32   | raw LZ4 block             |
//	| big-endian       | big-endian       | (compressed bytes)        |
//	+------------------+------------------+---------------------------+
//
// whose decompressed sizes add up to the page's uncompressed size.

const (
	lz4Prefix = 8 // decompressed and compressed size, big-endian uint32 each
	// lz4HadoopBlock is the most input one block takes when writing: Hadoop's
	// BlockCompressorStream limit for its default 256 KiB buffer (buffer - buffer/255 - 16),
	// so that even incompressible input compresses into the buffer its decompressor
	// allocates.
	lz4HadoopBlock = 256<<10 - (256<<10)/255 - 16
)

// DecodeLZ4Hadoop decodes a page body written with Parquet's LZ4 codec into dst[:n],
// where n is the page's uncompressed size; dst is reused when its capacity is at least
// n, and nothing is allocated then unless the body is an LZ4 frame or corrupt. It tries,
// in order:
//
//  1. Hadoop framing. The body parses only if every block's compressed size fits in the
//     bytes left, its decompressed size fits in what is left of n, its raw block decodes
//     to exactly that size, and the blocks end exactly at the end of the body. A body
//     that parses is final: if its blocks hold other than n bytes, that is an error.
//  2. One raw LZ4 block (LZ4_RAW), which must decode to exactly n bytes.
//  3. One LZ4 frame (without dictionary), which must fill the body exactly and hold
//     exactly n bytes.
//
// Every failure is an error that wraps ErrCorrupt and says why each form was rejected.
func DecodeLZ4Hadoop(dst, src []byte, n int) ([]byte, error) {
	if n < 0 {
		return nil, corrupt("lz4: uncompressed size %d", n)
	}
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		dst = make([]byte, n)
	}
	total, hadoop := lz4Hadoop(dst, src)
	if hadoop.ok() {
		if total != n {
			return nil, corrupt("lz4: %d-byte body: its Hadoop-framed blocks hold %d bytes, the page %d", len(src), total, n)
		}
		return dst, nil
	}
	got, err := 0, errLZ4Empty
	if n > 0 {
		got, err = lz4.UncompressBlock(src, dst)
	} else if len(src) == 1 && src[0] == 0 {
		return dst, nil // the raw block of nothing: a token of no literals
	}
	if err == nil && got == n {
		return dst, nil
	}
	raw := "corrupt, or longer than the page"
	if err == nil {
		raw = fmt.Sprintf("decodes to %d bytes", got)
	}
	ferr := lz4Frame(dst, src)
	if ferr == nil {
		return dst, nil
	}
	return nil, corrupt("lz4: %d-byte body, %d bytes uncompressed: not Hadoop-framed (%v), not a raw LZ4 block (%s), not an LZ4 frame (%v)",
		len(src), n, hadoop, raw, ferr)
}

// errLZ4Empty stands for the raw block decoder on an empty page: pierrec/lz4's
// UncompressBlock reads through dst's pointer even when dst is empty, and a nil one
// panics, so a page of 0 bytes takes only the one raw block that decodes to nothing.
var errLZ4Empty = errors.New("lz4: not the empty block")

// hadoopMiss says why a body is not Hadoop-framed. It is a plain value, not an error, so
// that trying the framing and falling back allocates nothing; it is formatted only when
// every form failed.
type hadoopMiss struct {
	why         int // one of the miss* constants; 0: the body parses
	block, at   int // the block, and its offset in the body
	first, next int // what the message needs
}

const (
	missNone       = iota
	missCompressed // first: compressed size, next: bytes left
	missDecompress // first: decompressed size, next: bytes left of the page
	missDecode     // first: decompressed size, next: decoded size (-1: corrupt)
	missTail       // first: bytes left, too few for a prefix
)

func (m hadoopMiss) ok() bool { return m.why == missNone }

func (m hadoopMiss) String() string {
	at := fmt.Sprintf("block %d at byte %d", m.block, m.at)
	switch m.why {
	case missCompressed:
		return fmt.Sprintf("%s: compressed size %d runs past the %d bytes left", at, m.first, m.next)
	case missDecompress:
		return fmt.Sprintf("%s: decompressed size %d exceeds the %d bytes left of the page", at, m.first, m.next)
	case missDecode:
		if m.next < 0 {
			return fmt.Sprintf("%s: corrupt raw block, or longer than its %d bytes", at, m.first)
		}
		return fmt.Sprintf("%s: decodes to %d bytes, its prefix says %d", at, m.next, m.first)
	case missTail:
		return fmt.Sprintf("%d bytes after the last block, too few for a prefix", m.first)
	}
	return "parses"
}

// lz4Hadoop decodes Hadoop-framed blocks into dst, which is as long as the page, and
// returns the bytes they hold. Like Arrow C++, it reads an empty body as no blocks, and
// a block whose compressed size is 0 as corrupt.
func lz4Hadoop(dst, src []byte) (int, hadoopMiss) {
	total, at := 0, 0
	for block := 0; len(src)-at >= lz4Prefix; block++ {
		miss := hadoopMiss{block: block, at: at}
		dsize := uint64(binary.BigEndian.Uint32(src[at:]))
		csize := uint64(binary.BigEndian.Uint32(src[at+4:]))
		body := at + lz4Prefix
		if left := uint64(len(src) - body); csize > left {
			miss.why, miss.first, miss.next = missCompressed, int(csize), int(left)
			return total, miss
		}
		if left := uint64(len(dst) - total); dsize > left {
			miss.why, miss.first, miss.next = missDecompress, int(dsize), int(left)
			return total, miss
		}
		got, err := -1, error(nil)
		switch {
		case csize > 0 && dsize > 0: // pierrec/lz4 decodes no input to nothing; liblz4 calls it corrupt
			got, err = lz4.UncompressBlock(src[body:body+int(csize)], dst[total:total+int(dsize)])
		case csize == 1 && src[body] == 0: // a block of nothing (errLZ4Empty: not through the decoder)
			got = 0
		}
		if err != nil || got != int(dsize) {
			if err != nil {
				got = -1
			}
			miss.why, miss.first, miss.next = missDecode, int(dsize), got
			return total, miss
		}
		at = body + int(csize)
		total += int(dsize)
	}
	if at != len(src) {
		return total, hadoopMiss{why: missTail, first: len(src) - at}
	}
	return total, hadoopMiss{}
}

// LZ4HadoopCodec is Parquet's LZ4 codec for arrow-go (RegisterCodecs): it reads as
// DecodeLZ4Hadoop does and writes Hadoop framing. It offers no streaming (compress.StreamingCodec), so arrow-go
// decodes every LZ4 page whole, into the buffer it sized from the page header.
type LZ4HadoopCodec struct{}

// DecodeWithError is what arrow-go's page reader calls, with dst as long as the page's
// uncompressed size.
func (LZ4HadoopCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	return DecodeLZ4Hadoop(dst, src, len(dst))
}

// Decode serves callers of the plain compress.Codec interface, which has no error
// result: it panics on corrupt input, as arrow-go's own codecs do there.
func (c LZ4HadoopCodec) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// Encode writes src as Hadoop-framed blocks of at most lz4HadoopBlock input bytes each;
// empty input is one block holding an empty raw block, as Arrow C++ writes it.
func (c LZ4HadoopCodec) Encode(dst, src []byte) []byte {
	if bound := c.CompressBound(int64(len(src))); int64(cap(dst)) < bound {
		dst = make([]byte, bound)
	}
	dst = dst[:cap(dst)]
	comp := lz4Compressors.Get().(*lz4.Compressor)
	defer lz4Compressors.Put(comp)
	out := 0
	for first := true; first || len(src) > 0; first = false {
		in := src[:min(len(src), lz4HadoopBlock)]
		n, err := comp.CompressBlock(in, dst[out+lz4Prefix:])
		if err != nil || n == 0 { // cannot happen: dst holds CompressBound
			panic(fmt.Sprintf("lz4: compressing %d bytes into %d: %v", len(in), len(dst)-out-lz4Prefix, err))
		}
		binary.BigEndian.PutUint32(dst[out:], uint32(len(in)))
		binary.BigEndian.PutUint32(dst[out+4:], uint32(n))
		out += lz4Prefix + n
		src = src[len(in):]
	}
	return dst[:out]
}

// EncodeLevel is Encode: the LZ4 block compressor has no levels.
func (c LZ4HadoopCodec) EncodeLevel(dst, src []byte, _ int) []byte { return c.Encode(dst, src) }

// CompressBound is the most Encode writes for n input bytes: a prefix and a raw block's
// bound for each block.
func (LZ4HadoopCodec) CompressBound(n int64) int64 {
	full := n / lz4HadoopBlock
	last := int(n % lz4HadoopBlock)
	bound := full * (lz4Prefix + int64(lz4.CompressBlockBound(lz4HadoopBlock)))
	if last > 0 || full == 0 {
		bound += lz4Prefix + int64(lz4.CompressBlockBound(last))
	}
	return bound
}
