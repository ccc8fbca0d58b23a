// Package pages decodes the pages of one flat Parquet column chunk straight into the
// caller's buffers: no Arrow array is built, and in the steady state nothing is allocated
// per page or per row group (a Decoder keeps its buffers across chunks).
//
// A Decoder takes the chunk's bytes as stored (page headers, dictionary page, data pages)
// and yields rows in order, a run at a time: Read decodes up to n rows of the current
// page into a Values, row-aligned (a null row holds the zero value and Null[k] = 1).
// It handles data pages v1 and v2, every codec arrow-go has a codec for (snappy, zstd,
// gzip, brotli, LZ4_RAW) and Parquet's LZ4, whose codec lives here (lz4.go; arrow-go has
// none: RegisterCodecs lends it to arrow-go), definition levels in the RLE / bit-packed
// hybrid or the deprecated BIT_PACKED (levels.go), and the value encodings PLAIN,
// PLAIN_DICTIONARY / RLE_DICTIONARY (with the dictionary page), DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT and RLE for booleans:
// every physical type in every encoding the format has for it. Only LZO, which arrow-go
// has no codec for (pyarrow neither), is refused. Repeated columns (lists) are
// not flat: Supported says so, and the caller reads them another way.
//
// # Checks
//
// Every page is checked against its header and the footer as it is read: the header
// parses within the chunk, the body decompresses to exactly the size the header gives
// (and to no more than the footer says the chunk holds; a zstd frame announcing more is
// refused before it is decoded), the level and value sections hold exactly the counts the
// header and the levels call for (a page's levels are exactly its num_values: no run of a
// level, index or RLE boolean decoder may end early or go on past the count but to pad
// its last group of 8, and no run may follow; no level may exceed the max, no index may
// point past the dictionary, no value section may hold bytes left over), a v2 header's
// null count is the levels', the dictionary page comes first and once, the data pages'
// values add up to the footer's count, and their nulls to the footer's null_count where
// it gives one (Chunk.NullCount). A failure is an *Error naming the page and its offset
// in the chunk (the chunk, Page -1, for the footer's counts), wrapping ErrCorrupt or
// ErrUnsupported; no input makes a Decoder panic or read outside the chunk (FuzzDecoder,
// FuzzHybrid, FuzzHeader, FuzzDeltaBinaryPacked, FuzzDeltaByteArray, FuzzLZ4Hadoop).
//
// Some of these checks can only be made at a page's end (left-over bytes or levels, a v2
// header's null count) or the chunk's (the footer's null count), so rows of a page read
// before its fault was found may already have been returned: a caller must treat an
// error as spoiling the whole chunk. Package serve does: a row group whose decoding
// fails is never published.
package pages
