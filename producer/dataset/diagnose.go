package dataset

import (
	"errors"

	"github.com/shmloader/shmloader/producer/pages"
)

// diagnose is called when arrow-go failed to decode leaves of row group rg: it walks
// their pages with package pages and returns what is wrong with which page, or nil when
// it finds nothing (arrow-go's own message then stands). It reads the chunks without
// their footer checksums: when arrow-go got to decode them they had passed already, and
// after a mismatch (LocatePage) the page checks are what can still say where.
func (r *Reader) diagnose(rg int, leaves map[int]bool) error {
	schema := r.ft.meta.Schema
	for i := range schema.NumColumns() {
		if !leaves[i] {
			continue
		}
		c := schema.Column(i)
		l := Leaf{Index: i, Type: c.PhysicalType(), TypeLen: c.TypeLength(), MaxDef: c.MaxDefinitionLevel(), MaxRep: c.MaxRepetitionLevel()}
		chunks, _, err := r.readChunks(rg, []Leaf{l}, nil, false)
		if err != nil {
			return err
		}
		if err := pages.Check(chunks[0]); err != nil && !errors.Is(err, pages.ErrUnsupported) {
			return leafError{path: c.Path(), err: err}
		}
	}
	return nil
}

// LocatePage reads the chunks of column name (as ReadRowGroup names columns) in row
// group rg (its index in the file) as stored, and walks their pages with the page
// decoder's checks (pages.Check), leaving out the footer's chunk checksums: after a
// checksum mismatch it names the page at fault, where a page check finds one. It
// returns nil when every page passes, and for a column without chunks (a partition
// column, a row group of no rows).
func (r *Reader) LocatePage(rg int, name string) error {
	meta := r.ft.meta
	fail := func(err error) error {
		return &Error{Op: "read", Path: r.file.Path, RowGroup: rg, Column: name, Err: err}
	}
	if rg < 0 || rg >= len(meta.RowGroups) {
		return fail(kindf(ErrRowGroup, "file has %d row groups", len(meta.RowGroups)))
	}
	if r.ds.IsPartition(name) || meta.RowGroups[rg].NumRows == 0 {
		return nil
	}
	fi, names, ok := r.field(name)
	if !ok {
		return fail(ErrNoColumn)
	}
	leaves, ok := r.leaves(fi, names)
	if !ok {
		return fail(ErrNoColumn)
	}
	err := r.diagnose(rg, leaves)
	var de *Error
	if errors.As(err, &de) { // a chunk could not be read: it names the leaf as a column
		err = de.Err
		if de.Column != "" && de.Column != name {
			err = leafError{path: de.Column, err: de.Err}
		}
	}
	if le, ok := err.(leafError); ok && le.path == name { // a flat column: the leaf is the column
		err = le.err
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// Checked counts what ReadRowGroup has verified since the Reader was opened, before
// arrow-go decoded it: column chunks, their pages (and of those, the ones whose header
// carries a CRC) and their bytes as stored, those that failed included. (ReadChunks's
// chunks are not counted: their pages are checked by whoever decodes them.)
type Checked struct{ Chunks, Pages, CRCPages, Bytes int64 }

// Checked is what ReadRowGroup has verified so far.
func (r *Reader) Checked() Checked { return r.src.checked }

// leafError names the leaf of a nested column a page error is in.
type leafError struct {
	path string
	err  error
}

func (e leafError) Error() string { return "leaf " + e.path + ": " + e.err.Error() }
func (e leafError) Unwrap() error { return e.err }
