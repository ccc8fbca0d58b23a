package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

var (
	magic          = []byte("PAR1")
	magicEncrypted = []byte("PARE")
)

// readFile opens one Parquet file and parses its footer (Readers reuse it, kept or read
// again: footers.go). It also hashes the raw footer for Fingerprint and to know the file
// again, which is why the footer is read here rather than by file.OpenParquetFile.
func readFile(path string, index int) (f *File, err error) {
	fail := func(err error) (*File, error) {
		return nil, &Error{Op: "open", Path: path, RowGroup: -1, Err: err}
	}
	fh, err := os.Open(path)
	if err != nil {
		return fail(pathless(err))
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return fail(err)
	}
	size := st.Size()
	if size < int64(2*len(magic)+4) {
		return fail(kindf(ErrCorrupt, "file of %d bytes is too small to be Parquet", size))
	}
	var tail [8]byte
	if _, err := fh.ReadAt(tail[:], size-8); err != nil {
		return fail(fmt.Errorf("read footer: %w", err))
	}
	switch {
	case bytes.Equal(tail[4:], magicEncrypted):
		return fail(kindf(ErrCorrupt, "encrypted Parquet files are not supported"))
	case !bytes.Equal(tail[4:], magic):
		return fail(kindf(ErrCorrupt, "no Parquet magic at the end of the file (truncated or not Parquet)"))
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n == 0 || n > size-8-int64(len(magic)) {
		return fail(kindf(ErrCorrupt, "footer length %d does not fit in a file of %d bytes (truncated?)", n, size))
	}
	raw := make([]byte, n)
	if _, err := fh.ReadAt(raw, size-8-n); err != nil && err != io.EOF {
		return fail(fmt.Errorf("read footer: %w", err))
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
	f = &File{Path: path, Index: index, Size: size, ModTime: st.ModTime().UnixNano(), ChangeTime: changeTime(st),
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

// changeTime is the inode change time of st in ns (0 where the system does not say).
func changeTime(st os.FileInfo) int64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return sys.Ctim.Nano()
	}
	return 0
}
