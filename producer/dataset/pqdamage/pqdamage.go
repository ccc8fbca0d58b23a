// Package pqdamage damages one page of a Parquet file in place, for tests of what
// readers report: the page is found through the footer and the page headers, and
// counted as the page decoder counts them (the dictionary page, when there is one, is
// page 0), so a test can expect "page N" in the report.
package pqdamage

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/shmloader/shmloader/producer/pages"
)

// Part is what of a page to damage.
type Part int

const (
	// Header zeroes the header's first byte: a thrift stop where the first field
	// should be, so the header lacks its required fields.
	Header Part = iota
	// Body inverts the first byte of the page's body: for a compressed page the
	// codec's header (snappy's length, a zstd frame's magic), for an uncompressed one a
	// value or a level.
	Body
	// Last inverts the last byte of the page's body: in an uncompressed PLAIN page the
	// most significant byte of its last value, which no page check can tell from another.
	Last
	// MoreLevels adds 1 to the count of the first run of the page's definition levels,
	// which must be a repeated run: the levels then hold one more than the header's
	// num_values. The page is a data page v2, or a data page v1 of an uncompressed chunk,
	// of a column with definition levels and no repetition levels.
	MoreLevels
	// FewerLevels takes 1 from that count: the levels run out one short of num_values.
	FewerLevels
)

// Where is the page that was damaged: the file offset of its header and of its column
// chunk's first page.
type Where struct {
	Offset, ChunkStart int64
}

// Page damages page page of column (its path in the schema, "b" or "s.a") in row
// group rowGroup of the file at path.
func Page(path string, rowGroup int, column string, page int, part Part) (Where, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Where{}, err
	}
	w, uncompressed, err := find(path, rowGroup, column, page, data)
	if err != nil {
		return Where{}, err
	}
	switch part {
	case Header:
		data[w.Offset] = 0
	case MoreLevels, FewerLevels:
		if err := levels(data, w, part, uncompressed); err != nil {
			return Where{}, fmt.Errorf("%s: page %d of %s in row group %d: %w", path, page, column, rowGroup, err)
		}
	case Body, Last:
		h, err := pages.ParseHeader(data[w.Offset:])
		if err != nil {
			return Where{}, err
		}
		if h.Compressed == 0 {
			return Where{}, fmt.Errorf("%s: page %d of %s in row group %d has no body", path, page, column, rowGroup)
		}
		at := w.Offset + int64(h.Size)
		if part == Last {
			at += int64(h.Compressed) - 1
		}
		data[at] ^= 0xff
	}
	return w, os.WriteFile(path, data, 0o644)
}

// levels changes the count of the first definition-level run of the page at w.
func levels(data []byte, w Where, part Part, uncompressed bool) error {
	h, err := pages.ParseHeader(data[w.Offset:])
	if err != nil {
		return err
	}
	at := w.Offset + int64(h.Size)
	switch {
	case h.Type == pages.DataPage && uncompressed && h.DefEncoding == pages.RLE:
		at += 4 // the levels' length
	case h.Type == pages.DataPageV2 && h.RepLen == 0 && h.DefLen > 0:
	default:
		return fmt.Errorf("not a data page whose definition levels can be changed in place")
	}
	run, n := binary.Uvarint(data[at:])
	if n <= 0 || run&1 == 1 || run < 4 {
		return fmt.Errorf("its definition levels do not start with a repeated run of 2 or more")
	}
	changed := run + 2
	if part == FewerLevels {
		changed = run - 2
	}
	if b := binary.AppendUvarint(nil, changed); len(b) == n {
		copy(data[at:], b)
		return nil
	}
	return fmt.Errorf("the run's count %d cannot change in place", run>>1)
}

// find locates the header of the page in data, the file's bytes, and says whether its
// chunk is uncompressed.
func find(path string, rowGroup int, column string, page int, data []byte) (Where, bool, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return Where{}, false, err
	}
	defer r.Close()
	meta := r.MetaData()
	leaf := meta.Schema.ColumnIndexByName(column)
	if leaf < 0 || rowGroup < 0 || rowGroup >= len(meta.RowGroups) {
		return Where{}, false, fmt.Errorf("%s: no column %q in row group %d", path, column, rowGroup)
	}
	md := meta.RowGroups[rowGroup].Columns[leaf].MetaData
	uncompressed := md.Codec == 0
	start := md.DataPageOffset
	if d := md.DictionaryPageOffset; d != nil && *d > 0 && *d < start {
		start = *d
	}
	pos, end := start, start+md.TotalCompressedSize
	for k := 0; pos < end; k++ {
		h, err := pages.ParseHeader(data[pos:end])
		if err != nil {
			return Where{}, false, fmt.Errorf("%s: page %d of %s: %w", path, k, column, err)
		}
		if k == page {
			return Where{Offset: pos, ChunkStart: start}, uncompressed, nil
		}
		pos += int64(h.Size + h.Compressed)
	}
	return Where{}, false, fmt.Errorf("%s: column %s of row group %d has fewer than %d pages", path, column, rowGroup, page+1)
}

func (p Part) String() string {
	return [...]string{Header: "header", Body: "body", Last: "last", MoreLevels: "more levels", FewerLevels: "fewer levels"}[p]
}
