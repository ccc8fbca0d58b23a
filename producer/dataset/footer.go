package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"path/filepath"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/shmloader/shmloader/producer/storage"
)

var (
	magic          = []byte("PAR1")
	magicEncrypted = []byte("PARE")
)

// footerRead is the tail of a file read at once to find its footer: one read in the
// common case (footers of files with tens of columns and row groups take a few KB;
// `shmloader gen`'s, 134 columns, about 150 KB per 10 row groups), then the rest of a
// larger footer with a second.
const footerRead = 256 << 10

// readFile reads the footer of object o and parses it (Readers reuse it, kept or read
// again: footers.go). It also hashes the raw footer for Fingerprint and to know the file
// again, which is why the footer is read here rather than by file.OpenParquetFile.
func readFile(ctx context.Context, st storage.Store, o storage.Object, index int) (f *File, err error) {
	path := o.Path
	fail := func(err error) (*File, error) {
		return nil, &Error{Op: "open", Path: path, RowGroup: -1, Err: err}
	}
	size := o.Size
	if size < int64(2*len(magic)+4) {
		return fail(kindf(ErrCorrupt, "file of %d bytes is too small to be Parquet", size))
	}
	r, err := st.Open(ctx, o)
	if err != nil {
		return nil, fromStorage(err)
	}
	defer r.Close()
	tail := make([]byte, min(size, footerRead))
	if err := r.ReadAt(ctx, tail, size-int64(len(tail))); err != nil {
		return fail(fmt.Errorf("read footer: %w", unwrapStorage(err)))
	}
	end := tail[len(tail)-8:]
	switch {
	case bytes.Equal(end[4:], magicEncrypted):
		return fail(kindf(ErrCorrupt, "encrypted Parquet files are not supported"))
	case !bytes.Equal(end[4:], magic):
		return fail(kindf(ErrCorrupt, "no Parquet magic at the end of the file (truncated or not Parquet)"))
	}
	n := int64(binary.LittleEndian.Uint32(end[:4]))
	if n == 0 || n > size-8-int64(len(magic)) {
		return fail(kindf(ErrCorrupt, "footer length %d does not fit in a file of %d bytes (truncated?)", n, size))
	}
	var raw []byte
	if n <= int64(len(tail))-8 {
		raw = tail[int64(len(tail))-8-n : len(tail)-8]
	} else {
		raw = make([]byte, n)
		if err := r.ReadAt(ctx, raw, size-8-n); err != nil {
			return fail(fmt.Errorf("read footer: %w", unwrapStorage(err)))
		}
	}
	meta, err := parseFooter(raw)
	var notes []string
	if err != nil {
		// A newer writer's logical type panics arrow-go: read such columns by their
		// physical type, as pyarrow does, and keep the file.
		fixed, n, serr := sanitizeFooter(raw)
		if serr != nil || len(n) == 0 {
			return fail(err)
		}
		if meta, err = parseFooter(fixed); err != nil {
			return fail(err)
		}
		notes = n
	}
	meta.SetSourceFileSize(size)
	if err := checkChunkRanges(meta, size); err != nil {
		return fail(err)
	}
	sums, err := parseChecksums(meta)
	if err != nil {
		return fail(err)
	}
	f = &File{Path: path, Index: index, Size: size, obj: o,
		Notes: notes, ChunkSums: sums != nil, footerLen: n, ft: &footer{meta: meta, sums: sums}}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(path), size)
	h.Write(raw)
	f.footerHash = h.Sum64()
	return f, nil
}

func parseFooter(raw []byte) (meta *metadata.FileMetaData, err error) {
	defer recovered(&err) // the last resort: checkSchema catches what is known to panic
	if err := checkSchema(raw); err != nil {
		return nil, err
	}
	meta, err = metadata.NewFileMetaData(raw, nil)
	if err != nil {
		return nil, kindf(ErrCorrupt, "footer: %v", err)
	}
	if meta.Schema == nil || meta.Schema.NumColumns() == 0 {
		return nil, kindf(ErrCorrupt, "footer has no columns")
	}
	return meta, nil
}

// checkChunkRanges rejects a footer whose row groups or column chunks point outside the
// file, so that readers never ask for a range that cannot exist.
func checkChunkRanges(meta *metadata.FileMetaData, size int64) error {
	ncols := meta.Schema.NumColumns()
	for i, rg := range meta.RowGroups {
		if rg.NumRows < 0 {
			return kindf(ErrCorrupt, "row group %d has %d rows", i, rg.NumRows)
		}
		if len(rg.Columns) != ncols {
			return kindf(ErrCorrupt, "row group %d has %d column chunks, the schema %d", i, len(rg.Columns), ncols)
		}
		for j := range rg.Columns {
			if rg.NumRows == 0 {
				break // never read; arrow-go leaves such chunks at offset 0
			}
			start, n, ok := chunkRange(meta, i, j)
			if !ok || start < int64(len(magic)) || n <= 0 || start > size || n > size-start { // no start+n: it can overflow
				return kindf(ErrCorrupt, "row group %d: column chunk %d lies outside the file (offset %d, %d bytes, file %d bytes)", i, j, start, n, size)
			}
		}
	}
	return nil
}
