package cache

import (
	"errors"
	"fmt"

	"github.com/shmloader/shmloader/internal/errkind"
)

// Sentinel errors. Every error from this package that concerns a file is an *Error that
// names it; test with errors.Is.
var (
	// ErrNotAdmitted: the eviction policy keeps what is cached rather than this entry (with
	// an Oracle: every entry it would have to evict is needed sooner). Decode elsewhere.
	ErrNotAdmitted = errors.New("not admitted by the eviction policy")
	// ErrTooLarge: the entry is bigger than one shard's budget (Size / Shards).
	ErrTooLarge = errors.New("entry larger than a shard's budget")
	// ErrNoSpace: the file system cannot hold the entry, or the manifest that lists it
	// (ENOSPC, EDQUOT or EFBIG).
	ErrNoSpace = errors.New("no space left for the entry")
	// ErrLive: a process has the cache dir open, so it cannot be cleared.
	ErrLive = errors.New("cache dir is open in a live process")
	// ErrFormat: the dir was written by another format version of the cache; it is never
	// read, only cleared.
	ErrFormat = errors.New("cache dir has another format version")
	// ErrNotCache: the dir holds no cache (no info file and no shards).
	ErrNotCache = errors.New("not a cache dir")
	// ErrClosed: the Cache was closed.
	ErrClosed = errors.New("cache is closed")
	// ErrTimeout: a lock was not free in time.
	ErrTimeout = errors.New("timed out waiting for a lock")

	// Validation of bytes read from disk: each failure has its own sentinel.

	// ErrBadMagic: the file does not start with the expected magic.
	ErrBadMagic = errors.New("bad magic")
	// ErrVersion: the file has another format version.
	ErrVersion = errors.New("format version mismatch")
	// ErrBadSize: a recorded size disagrees with the file, or exceeds a cap.
	ErrBadSize = errors.New("size mismatch")
	// ErrBadOffset: a tensor region is misaligned, overlaps or lies outside the file.
	ErrBadOffset = errors.New("offset out of range")
	// ErrChecksum: the checksum does not match the bytes.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrBadKey: the key in the file is not the key its name or the request says.
	ErrBadKey = errors.New("key mismatch")
	// ErrBadRecord: a decoded manifest record or info file field is out of range.
	ErrBadRecord = errors.New("bad record")
)

// Error is an operation on a file or dir of the cache that failed.
type Error struct {
	Op   string // "open", "create", "commit", "read manifest", "validate", ...
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("cache %s %s: %v", e.Op, e.Path, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// kindf gives a sentinel a specific message (errkind): errors.Is finds the sentinel, and
// the text says which field was wrong and by how much.
func kindf(kind error, format string, args ...any) error {
	return errkind.Errorf(kind, format, args...)
}

// isCorrupt reports whether err says bytes on disk are bad (as opposed to an I/O error
// or another format version).
func isCorrupt(err error) bool {
	for _, k := range []error{ErrBadMagic, ErrBadSize, ErrBadOffset, ErrChecksum, ErrBadKey, ErrBadRecord} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
