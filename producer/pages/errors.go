package pages

import (
	"errors"
	"fmt"

	"github.com/shmloader/shmloader/internal/errkind"
)

var (
	// ErrCorrupt: a page disagrees with its header, the footer or itself.
	ErrCorrupt = errors.New("corrupt Parquet data")
	// ErrUnsupported: valid Parquet this decoder does not read (the caller falls back).
	ErrUnsupported = errors.New("not supported by the page decoder")
)

// Error is a failure inside one page of a chunk.
type Error struct {
	Page   int // index of the page in the chunk, dictionary page included; -1: the chunk
	Offset int // offset of the page header in the chunk
	Err    error
}

func (e *Error) Error() string {
	if e.Page < 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("page %d (chunk offset %d): %v", e.Page, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// corrupt and unsupported give their sentinel a specific message (errkind).
func corrupt(format string, args ...any) error {
	return errkind.Errorf(ErrCorrupt, format, args...)
}

func unsupported(format string, args ...any) error {
	return errkind.Errorf(ErrUnsupported, format, args...)
}
