package dataset

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// ChecksumKey is the footer key/value entry holding one CRC-32 (IEEE, the polynomial of
// Parquet page CRCs) per column chunk, each over the chunk's bytes as stored. Its value is
// the layout hash (16 hex digits), a colon, then 8 hex digits per chunk, row groups in
// order and within each the leaf columns in schema order. The layout hash covers every
// chunk's offset and size: tools that copy key/value metadata into a rewritten file (as
// pyarrow does through the schema's metadata) leave an entry that does not match the new
// layout, and Open ignores it instead of failing every read.
//
// It exists because arrow-go v18.8.0 neither writes nor verifies the page CRCs of the
// Parquet format, so without it a flipped byte in a snappy or uncompressed page decodes
// silently into wrong values. `shmloader gen` writes it; Readers verify it, and also verify
// standard page CRCs wherever a file's page headers carry them (other writers).
const ChecksumKey = "shmloader.chunk_crc32"

// ChunkChecksums computes the ChecksumKey value of a file being written: r reads the bytes
// written so far, meta is the writer's footer once the last row group is closed.
func ChunkChecksums(r io.ReaderAt, meta *metadata.FileMetaData) (string, error) {
	var b strings.Builder
	layout, ok := layoutHash(meta)
	if !ok {
		return "", fmt.Errorf("a column chunk has no metadata")
	}
	fmt.Fprintf(&b, "%016x:", layout)
	var buf []byte
	for i, rg := range meta.RowGroups {
		for j := range rg.Columns {
			start, n, _ := chunkRange(meta, i, j)
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if _, err := r.ReadAt(buf, start); err != nil {
				return "", fmt.Errorf("row group %d: column chunk %d: %w", i, j, err)
			}
			fmt.Fprintf(&b, "%08x", crc32.ChecksumIEEE(buf))
		}
	}
	return b.String(), nil
}

// parseChecksums returns the chunk CRCs of a file's footer, indexed by
// row group * columns + leaf column, or nil when the file has none or they were made for
// another layout.
func parseChecksums(meta *metadata.FileMetaData) ([]uint32, error) {
	v := meta.KeyValueMetadata().FindValue(ChecksumKey)
	if v == nil {
		return nil, nil
	}
	layout, ok := layoutHash(meta)
	prefix := fmt.Sprintf("%016x:", layout)
	if !ok || !strings.HasPrefix(*v, prefix) {
		return nil, nil
	}
	sumsHex := (*v)[len(prefix):]
	n := len(meta.RowGroups) * meta.Schema.NumColumns()
	if len(sumsHex) != 8*n {
		return nil, kindf(ErrCorrupt, "footer entry %s has %d checksum digits, want %d (8 per column chunk)", ChecksumKey, len(sumsHex), 8*n)
	}
	raw, err := hex.DecodeString(sumsHex)
	if err != nil {
		return nil, kindf(ErrCorrupt, "footer entry %s: %v", ChecksumKey, err)
	}
	sums := make([]uint32, n)
	for i := range sums {
		b := raw[4*i:]
		sums[i] = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	return sums, nil
}

// layoutHash is FNV-1a over the offset and size of every column chunk.
func layoutHash(meta *metadata.FileMetaData) (uint64, bool) {
	h := fnv.New64a()
	var b [16]byte
	for i, rg := range meta.RowGroups {
		for j := range rg.Columns {
			start, n, ok := chunkRange(meta, i, j)
			if !ok {
				return 0, false
			}
			binary.LittleEndian.PutUint64(b[:8], uint64(start))
			binary.LittleEndian.PutUint64(b[8:], uint64(n))
			h.Write(b[:])
		}
	}
	return h.Sum64(), true
}

// chunkRange is where column chunk col of row group rg lies in the file: from its
// dictionary page when it has one, else its first data page, for TotalCompressedSize
// bytes (page headers included), the same range arrow-go reads.
func chunkRange(meta *metadata.FileMetaData, rg, col int) (start, n int64, ok bool) {
	cc := meta.RowGroups[rg].Columns[col]
	if cc == nil || cc.MetaData == nil {
		return 0, 0, false
	}
	md := cc.MetaData
	start = md.DataPageOffset
	if d := md.DictionaryPageOffset; d != nil && *d > 0 && *d < start {
		start = *d
	}
	return start, md.TotalCompressedSize, true
}
