package pages

import (
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// CheckBody refuses a compressed page body that announces more bytes than the page's
// header does, before any decoder sees it: a zstd frame names its content size up front,
// and the zstd decoder allocates that much at once (17 bytes claiming 60 GiB took the
// process down). Other codecs grow their output as they decode, bounded by size.
func CheckBody(codec compress.Compression, raw []byte, size int) error {
	if codec == compress.Codecs.Snappy {
		// A snappy block starts with its decoded length: it must be the header's.
		if n, err := s2.DecodedLen(raw); err == nil && n != size {
			return corrupt("snappy block of %d bytes in a page the header says is %d", n, size)
		}
		return nil
	}
	if codec != compress.Codecs.Zstd {
		return nil
	}
	n, ok := zstdContentSize(raw)
	if ok && n > uint64(size) {
		return corrupt("zstd frame of %d bytes in a page the header says is %d", n, size)
	}
	return nil
}

// zstdContentSize reads the Frame_Content_Size of the zstd frame at the start of b (RFC
// 8878, 3.1.1); ok is false when the frame does not say or b is not a zstd frame (the
// decoder then reports what is wrong).
func zstdContentSize(b []byte) (uint64, bool) {
	var h zstd.Header
	if h.Decode(b) != nil || !h.HasFCS {
		return 0, false
	}
	return h.FrameContentSize, true
}
