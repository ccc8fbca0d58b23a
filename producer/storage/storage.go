package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Object is one object of a dataset: a Parquet file.
type Object struct {
	// Path names the object as the dataset's pattern was resolved (a local path,
	// relative when the pattern was).
	Path string
	Size int64
	// Identity names this version of the object's content: any change to the content
	// changes it (for a local file: the real absolute path, size, modification and change
	// times). The producer's cache keys entries by it, with the footer's hash.
	Identity string

	version string // what Open checks the object against (Store-specific)
}

// Listing is a dataset's objects, sorted by path.
type Listing struct {
	Objects []Object
	// Root is the folder under which hive-style key=value folders name partition
	// columns: the directory named, or for a glob the folders before its first element
	// with metacharacters; "" for a single object.
	Root string
}

// Store lists, describes and opens a dataset's objects. Its methods may be called from
// many goroutines at once.
type Store interface {
	// List resolves a dataset pattern to its objects: an object is itself, a folder is
	// every *.parquet object below it at any depth, and a pattern with glob
	// metacharacters is a glob. Names starting with "." or "_" below the folder are left
	// out (Spark's _SUCCESS, _delta_log/, .crc files).
	List(ctx context.Context, pattern string) (Listing, error)
	// Stat describes the object at path as it is now.
	Stat(ctx context.Context, path string) (Object, error)
	// Open opens o for reading; it fails with ErrChanged when the object is no longer
	// the version o describes.
	Open(ctx context.Context, o Object) (Reader, error)
}

// Reader reads ranges of one opened object. A Reader is used by one goroutine at a time.
type Reader interface {
	// ReadAt reads len(p) bytes at offset off: all of them, or an error (a range past
	// the object's end is io.ErrUnexpectedEOF).
	ReadAt(ctx context.Context, p []byte, off int64) error
	Close() error
}

var (
	// ErrNoObjects: a pattern matched no Parquet file.
	ErrNoObjects = errors.New("no Parquet files")
	// ErrChanged: an object is no longer the version its listing described.
	ErrChanged = errors.New("file changed")
)

// Error is an operation on one object, or on a pattern, that failed: Path names it, Err
// says why (without the path again).
type Error struct {
	Op   string // "list", "stat", "open", "read"
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// For returns the Store that reads pattern: Local for a path, an error naming the
// scheme for a URL (s3://, gs://), which no Store reads yet.
func For(pattern string) (Store, error) {
	if scheme, ok := urlScheme(pattern); ok {
		return nil, &Error{Op: "open", Path: pattern, Err: fmt.Errorf("%s:// URLs are not read yet: "+
			"this shmloader reads local files only (a local disk or a mounted file system); copy or mount the data there", scheme)}
	}
	return Local{}, nil
}

// urlScheme is the scheme of a dataset named by a URL (s3://bucket/path), if it is one:
// letters, digits, +, - and . before "://".
func urlScheme(pattern string) (string, bool) {
	scheme, _, ok := strings.Cut(pattern, "://")
	if !ok || scheme == "" {
		return "", false
	}
	for _, r := range scheme {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return "", false
		}
	}
	return scheme, true
}
