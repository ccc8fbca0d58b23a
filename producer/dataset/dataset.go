// Package dataset opens a Parquet dataset: it lists the files in sorted order (a
// directory at any depth), reads each footer (keeping them parsed within a budget),
// checks that every file has the same
// columns and merges their types into one schema, adds the partition columns of
// hive-style key=value folders, and reads the columns of one row group at a time, each
// converted to the schema's type, fields of structs included. Every error names the
// file, and where it applies the row group and the column. Its Reader registers the
// Parquet LZ4 codec that arrow-go lacks (pages.RegisterCodecs) before arrow-go reads.
package dataset

import (
	"container/list"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/storage"
)

// Dataset is a set of Parquet files with one schema.
type Dataset struct {
	Pattern string        // as given to Open
	Files   []*File       // sorted by path
	Schema  *arrow.Schema // the files' merged Arrow schema, then the partition columns
	// Partitions are the columns of the key=value folders, in folder order, also the
	// last fields of Schema; nil when the files sit in no such folders.
	Partitions []arrow.Field
	RowGroups  []RowGroup // every row group: files in order, then row groups in file order
	Rows       int64      // total rows

	store   storage.Store // where the files are read
	footers *footerCache
}

// File is one Parquet file. Its parsed footer (Footer) is kept within the dataset's
// FooterBudget and read again when needed (footers.go).
type File struct {
	Path  string
	Index int // position in Dataset.Files
	Size  int64
	// Notes say what of the footer was read otherwise than written: columns of a logical
	// type this reader does not know, read by their physical type (`shmloader inspect`
	// shows them).
	Notes []string
	// ChunkSums: the footer carries a CRC of every column chunk (files of `shmloader
	// gen`), so every byte of the file is checked, with or without page CRCs.
	ChunkSums bool

	obj        storage.Object // the object as listed: what Readers open
	footerHash uint64         // FNV-1a of base name, size and raw footer, for Fingerprint
	footerLen  int64          // the footer's bytes as stored
	part       []partValue    // the values of Dataset.Partitions

	fc   *footerCache  // the dataset's; nil for a File read on its own
	ft   *footer       // fc.mu: the parsed footer, nil when not kept
	elem *list.Element // fc.mu: f in fc.lru
}

// RowGroup is one row group of one file.
type RowGroup struct {
	File              *File
	Index             int // row group index within the file
	Global            int // position in Dataset.RowGroups
	Rows              int64
	CompressedBytes   int64 // column chunks as stored
	UncompressedBytes int64
}

// Stats is what a row group's footer says about one column, for filter pushdown.
// Min and Max are set only when HasMinMax; numbers are given both as float64 and, for
// integer columns, exactly as int64.
type Stats struct {
	Rows         int64
	HasNullCount bool
	NullCount    int64
	HasMinMax    bool
	Kind         StatKind
	MinF, MaxF   float64 // KindInt and KindFloat
	MinI, MaxI   int64   // KindInt
	MinS, MaxS   string  // KindString
}

// StatKind is the kind of a column's min and max.
type StatKind int

const (
	KindNone StatKind = iota // no usable min/max (booleans, lists, unknown types)
	KindInt
	KindFloat
	KindString
)

// Identity names this very version of the file: its identity in its store (for a local
// file its real path, size, modification and change times: storage.Local) and a hash of
// the footer. A file rewritten in place, even with the same size and its old mtime put
// back, gets another identity; the cache keys entries by it.
func (f *File) Identity() string {
	return fmt.Sprintf("%s\x00%016x", f.obj.Identity, f.footerHash)
}
