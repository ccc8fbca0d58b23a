package dataset

import (
	"errors"
	"fmt"

	"github.com/shmloader/shmloader/internal/errkind"
	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/storage"
)

// Sentinel errors. Every error from this package is an *Error that names the file (or the
// pattern), and where it applies the row group and the column; test with errors.Is.
var (
	// ErrNoFiles: the pattern matched no Parquet file (storage.ErrNoObjects).
	ErrNoFiles = storage.ErrNoObjects
	// ErrNoRows: the files hold no rows at all.
	ErrNoRows = errors.New("dataset has no rows")
	// ErrSchema: a file's schema differs from the first file's.
	ErrSchema = errors.New("schema mismatch")
	// ErrCorrupt: a footer, page header or column chunk cannot be decoded (the same
	// sentinel as pages.ErrCorrupt, which the page decoder returns).
	ErrCorrupt = pages.ErrCorrupt
	// ErrChecksum: bytes read do not match a page CRC or a chunk checksum of the footer.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrNoColumn: no column has this name (top-level, dotted path or partition).
	ErrNoColumn = errors.New("no such column")
	// ErrRowGroup: the row group index is out of range.
	ErrRowGroup = errors.New("row group out of range")
	// ErrChanged: a file is not the one its footer was first read from
	// (storage.ErrChanged).
	ErrChanged = storage.ErrChanged
)

// Error is an operation on one file (or, for Open, on the pattern) that failed.
type Error struct {
	Op       string // "open", "read", "stats"
	Path     string // the file, or the pattern when no single file is at fault
	RowGroup int    // row group index within the file; -1 when not about one row group
	Column   string // column name (a dotted path for a field of a struct); "" when not about one column
	Err      error
}

func (e *Error) Error() string {
	s := e.Op + " " + e.Path
	if e.RowGroup >= 0 {
		s += fmt.Sprintf(": row group %d", e.RowGroup)
	}
	if e.Column != "" {
		s += fmt.Sprintf(": column %q", e.Column)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// kindf gives a sentinel a specific message (errkind): errors.Is finds the sentinel, and
// the text reads "is double, but a.parquet has float" instead of repeating the sentinel.
func kindf(kind error, format string, args ...any) error {
	return errkind.Errorf(kind, format, args...)
}

// recovered turns a panic inside arrow-go into an error: a corrupt file must never take
// the producer down. Use as: defer recovered(&err). The caller then walks the chunk's
// pages (Reader.diagnose) to say which page is wrong; this text stands only when no page
// check finds the fault.
func recovered(err *error) {
	if p := recover(); p != nil {
		*err = kindf(ErrCorrupt, "cannot be decoded (%v)", p)
	}
}

// Remedy says what to do about err, for the line under its message: "" when this
// package has nothing to add.
func Remedy(err error) string {
	switch {
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrChecksum):
		return "the file is damaged (or is not Parquet as written): copy it again or write it again, or move it out of the dataset"
	case errors.Is(err, ErrSchema):
		return "every file of a dataset must have the columns of the first, with the same types: write that file again with its schema, or move it out of the dataset"
	}
	return ""
}

// fromStorage makes an error of package storage one of this package: an *Error of op
// "open" naming the object or pattern.
func fromStorage(err error) error {
	var se *storage.Error
	if errors.As(err, &se) {
		return &Error{Op: "open", Path: se.Path, RowGroup: -1, Err: se.Err}
	}
	return err
}

// unwrapStorage drops the *storage.Error around err, whose path an *Error names.
func unwrapStorage(err error) error {
	var se *storage.Error
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}
