// Package errkind gives a sentinel error a specific message. errors.Is finds the
// sentinel (the error's kind), and the text is the message alone: "is double, but
// a.parquet has float" rather than the sentinel's own words again. The sentinels stay
// in each package's errors.go; this is only the wrapper they share.
package errkind

import "fmt"

// Error is a message of the kind Kind; it unwraps to Kind.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

// Errorf returns an *Error of kind with the message fmt.Sprintf(format, args...). The
// message wraps nothing else: %w in format is not supported.
func Errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
