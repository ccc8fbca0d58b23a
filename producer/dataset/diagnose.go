package dataset

import (
	"context"
	"errors"

	"github.com/shmloader/shmloader/producer/pages"
)

// diagnose is called when arrow-go failed to decode chunks (of leaves ls, in order): it
// walks their pages with package pages and returns what is wrong with which page, or nil
// when it finds nothing (arrow-go's own message then stands).
func (r *Reader) diagnose(ls []Leaf, chunks []pages.Chunk) error {
	schema := r.ft.meta.Schema
	for i, c := range chunks {
		if err := pages.Check(c); err != nil && !errors.Is(err, pages.ErrUnsupported) {
			return leafError{path: schema.Column(ls[i].Index).Path(), err: err}
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
	// Without the footer's checksums: after a mismatch the page checks are what can
	// still say where.
	ls := r.leafList(leaves)
	chunks, _, err := r.readChunks(context.Background(), rg, ls, nil, false)
	if err == nil {
		err = r.diagnose(ls, chunks)
	}
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

// leafError names the leaf of a nested column a page error is in.
type leafError struct {
	path string
	err  error
}

func (e leafError) Error() string { return "leaf " + e.path + ": " + e.err.Error() }
func (e leafError) Unwrap() error { return e.err }
