package dataset

import (
	"encoding/binary"
	"hash/fnv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Open lists the files of pattern (a file, a directory of *.parquet files, or a glob),
// reads every footer once and checks that all files share the first file's schema.
func Open(pattern string) (*Dataset, error) {
	paths, err := listFiles(pattern)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Pattern: pattern}
	for i, p := range paths {
		f, err := readFile(p, i)
		if err != nil {
			return nil, err
		}
		sc, err := arrowSchema(f)
		if err != nil {
			return nil, &Error{Op: "open", Path: p, RowGroup: -1, Err: err}
		}
		if i == 0 {
			d.Schema = sc
		} else if d.Schema, err = mergeSchema(d.Schema, d.Files[0].Path, sc, p); err != nil {
			return nil, err
		}
		d.Files = append(d.Files, f)
		d.addRowGroups(f)
	}
	if d.Rows == 0 {
		return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: kindf(ErrNoRows, "%d file(s), no rows", len(d.Files))}
	}
	return d, nil
}

func arrowSchema(f *File) (sc *arrow.Schema, err error) {
	defer recovered(&err)
	// Our own footer entries stay out of the schema: whoever writes data with this schema
	// must not copy checksums of other bytes into a new file.
	var kv metadata.KeyValueMetadata
	for _, e := range f.Meta.KeyValueMetadata() {
		if !strings.HasPrefix(e.Key, "shmloader.") {
			kv = append(kv, e)
		}
	}
	sc, err = pqarrow.FromParquet(f.Meta.Schema, &pqarrow.ArrowReadProperties{}, kv)
	if err != nil {
		return nil, kindf(ErrCorrupt, "schema: %v", err)
	}
	return sc, nil
}

func (d *Dataset) addRowGroups(f *File) {
	for i, rg := range f.Meta.RowGroups {
		g := RowGroup{File: f, Index: i, Global: len(d.RowGroups), Rows: rg.NumRows}
		for _, cc := range rg.Columns {
			if cc.MetaData != nil {
				g.CompressedBytes += cc.MetaData.TotalCompressedSize
				g.UncompressedBytes += cc.MetaData.TotalUncompressedSize
			}
		}
		d.RowGroups = append(d.RowGroups, g)
		d.Rows += rg.NumRows
	}
}

// Field returns the top-level field of that name.
func (d *Dataset) Field(name string) (arrow.Field, bool) {
	fs, ok := d.Schema.FieldsByName(name)
	if !ok || len(fs) == 0 {
		return arrow.Field{}, false
	}
	return fs[0], true
}

// ColumnNames returns the top-level field names in schema order.
func (d *Dataset) ColumnNames() []string {
	names := make([]string, d.Schema.NumFields())
	for i, f := range d.Schema.Fields() {
		names[i] = f.Name
	}
	return names
}

// Fingerprint is a stable hash of the dataset's content as the footers describe it: each
// file's base name, size and raw footer bytes, in file order. Any rewrite changes sizes,
// offsets or statistics in the footer, and files from `shmloader gen` also carry a CRC of
// every column chunk there. Directories and modification times are left out, so a copied
// dataset keeps its fingerprint.
func (d *Dataset) Fingerprint() uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, f := range d.Files {
		binary.LittleEndian.PutUint64(b[:], f.footerHash)
		h.Write(b[:])
	}
	return h.Sum64()
}
