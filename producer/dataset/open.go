package dataset

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/shmloader/shmloader/producer/storage"
)

// Open lists the files of pattern (a file, a directory with *.parquet files at any
// depth, or a glob) through its Store (storage.For), reads every footer once, checks that all files have the first
// file's columns and merges their types (schema.go), and adds the partition columns of
// key=value folders (partition.go).
func Open(pattern string) (*Dataset, error) {
	st, err := storage.For(pattern)
	if err != nil {
		return nil, fromStorage(err)
	}
	return OpenStore(context.Background(), st, pattern)
}

// OpenStore is Open with the objects of pattern listed and read through st.
func OpenStore(ctx context.Context, st storage.Store, pattern string) (*Dataset, error) {
	list, err := st.List(ctx, pattern)
	if err != nil {
		return nil, fromStorage(err)
	}
	root := list.Root
	d := &Dataset{Pattern: pattern, store: st, footers: newFooterCache(st, footerBudget)}
	for i, o := range list.Objects {
		p := o.Path
		f, err := readFile(ctx, st, o, i)
		if err != nil {
			return nil, err
		}
		f.fc = d.footers
		sc, err := arrowSchema(f)
		if err != nil {
			return nil, &Error{Op: "open", Path: p, RowGroup: -1, Err: err}
		}
		sc = canonicalSchema(sc)
		if i == 0 {
			d.Schema = sc
		} else if d.Schema, err = mergeSchema(d.Schema, d.Files[0].Path, sc, p); err != nil {
			return nil, err
		}
		d.Files = append(d.Files, f)
		d.addRowGroups(f)
		d.footers.put(f, f.ft) // may drop older files' footers: Footer reads them again
	}
	if err := d.setPartitions(root); err != nil {
		return nil, err
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
	meta := f.ft.meta // Open's own, not dropped yet
	for _, e := range meta.KeyValueMetadata() {
		if !strings.HasPrefix(e.Key, "shmloader.") {
			kv = append(kv, e)
		}
	}
	sc, err = pqarrow.FromParquet(meta.Schema, &pqarrow.ArrowReadProperties{}, kv)
	if err != nil {
		return nil, kindf(ErrCorrupt, "schema: %v", err)
	}
	return sc, nil
}

func (d *Dataset) addRowGroups(f *File) {
	for i, rg := range f.ft.meta.RowGroups {
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
		for k, v := range f.part {
			fmt.Fprintf(h, "%s=%t:%s\x00", d.Partitions[k].Name, v.null, v.text)
		}
	}
	return h.Sum64()
}
