// Package pages decodes the pages of one flat Parquet column chunk straight into the
// caller's buffers: no Arrow array is built, and in the steady state nothing is allocated
// per page or per row group (a Decoder keeps its buffers across chunks).
//
// A Decoder takes the chunk's bytes as stored (page headers, dictionary page, data pages)
// and yields rows in order, a run at a time: Read decodes up to n rows of the current
// page into a Values, row-aligned (a null row holds the zero value and Null[k] = 1).
// It handles data pages v1 and v2, every codec arrow-go has a codec for (snappy, zstd,
// gzip, brotli, LZ4_RAW and, once registered, LZ4), definition levels in the RLE /
// bit-packed hybrid, and the value encodings PLAIN, PLAIN_DICTIONARY / RLE_DICTIONARY
// (with the dictionary page), DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
// DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT and RLE for booleans. Repeated columns (lists) are
// not flat: Supported says so, and the caller reads them another way.
//
// # Checks
//
// Every page is checked against its header and the footer before a value is taken from
// it: the header parses within the chunk, the body decompresses to exactly the size the
// header gives, the level and value sections hold exactly the counts the header and the
// levels call for (no run of a level or index decoder may end early, no index may point
// past the dictionary), the dictionary page comes first and once, and the data pages'
// values add up to the footer's count. A failure is an *Error naming the page and its
// offset in the chunk, wrapping ErrCorrupt or ErrUnsupported; no input makes a Decoder
// panic or read outside the chunk (FuzzDecoder).
package pages
