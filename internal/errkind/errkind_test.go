package errkind

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorf(t *testing.T) {
	kind, other := errors.New("bad record"), errors.New("bad size")
	err := Errorf(kind, "rows %d", -1)
	if err.Error() != "rows -1" {
		t.Errorf("text %q, want the message alone", err.Error())
	}
	if !errors.Is(err, kind) || errors.Is(err, other) {
		t.Errorf("errors.Is finds the kind and only the kind: %v", err)
	}
	if errors.Unwrap(err) != kind {
		t.Errorf("Unwrap = %v, want the kind", errors.Unwrap(err))
	}
	wrapped := fmt.Errorf("read x: %w", err)
	var e *Error
	if !errors.As(wrapped, &e) || e.Kind != kind || !errors.Is(wrapped, kind) {
		t.Errorf("through a wrapper: %v", wrapped)
	}
	if got := Errorf(kind, "100%% sure").Error(); got != "100% sure" {
		t.Errorf("a format without args is still formatted: %q", got)
	}
}
