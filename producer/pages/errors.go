package pages

import (
	"errors"
	"fmt"
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

// kindError gives a sentinel a specific message.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func corrupt(format string, args ...any) error {
	return &kindError{kind: ErrCorrupt, msg: fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) error {
	return &kindError{kind: ErrUnsupported, msg: fmt.Sprintf(format, args...)}
}
