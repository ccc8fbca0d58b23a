package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/shmloader/shmloader/internal/errkind"
)

// Local is the Store of a local (or mounted) file system.
type Local struct{}

var _ Store = Local{}

// List implements Store. Directories that a glob matches are skipped, so "data/*" works
// beside subfolders, and links to directories are not followed inside a directory (no
// loops). In a glob's matches, hidden names below its wildcards are left out unless the
// glob's own element there starts with that character. A relative pattern is resolved
// against the current directory, and a failure to find it says where it looked.
func (Local) List(ctx context.Context, pattern string) (Listing, error) {
	fail := func(path string, err error) (Listing, error) {
		return Listing{}, &Error{Op: "list", Path: path, Err: err}
	}
	if pattern == "" {
		return fail(pattern, errkind.Errorf(ErrNoObjects, "empty dataset path"))
	}
	var paths []string
	var root string
	if strings.ContainsAny(pattern, "*?[") {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return fail(pattern, fmt.Errorf("bad glob: %w", err))
		}
		root = globRoot(pattern)
		for _, p := range m {
			if !hiddenMatch(root, pattern, p) {
				paths = append(paths, p)
			}
		}
	} else {
		st, err := os.Stat(pattern)
		if err != nil {
			err = pathless(err)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				err = resolvedAgainstCwd(pattern, err)
			}
			return fail(pattern, err)
		}
		if !st.IsDir() {
			o, err := localObject(pattern, st)
			if err != nil {
				return fail(pattern, err)
			}
			return Listing{Objects: []Object{o}}, nil
		}
		if paths, err = walkParquet(ctx, pattern); err != nil {
			return Listing{}, err
		}
		root = pattern
	}
	objs := make([]Object, 0, len(paths))
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return fail(p, pathless(err))
		}
		if !st.Mode().IsRegular() {
			continue
		}
		o, err := localObject(p, st)
		if err != nil {
			return fail(p, err)
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		return fail(pattern, resolvedAgainstCwd(pattern, errkind.Errorf(ErrNoObjects, "no Parquet files match")))
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Path < objs[j].Path })
	return Listing{Objects: objs, Root: root}, nil
}

// Stat implements Store.
func (Local) Stat(_ context.Context, path string) (Object, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Object{}, &Error{Op: "stat", Path: path, Err: pathless(err)}
	}
	o, err := localObject(path, st)
	if err != nil {
		return Object{}, &Error{Op: "stat", Path: path, Err: err}
	}
	return o, nil
}

// Open implements Store: the file opened must still have o's size and times.
func (Local) Open(_ context.Context, o Object) (Reader, error) {
	fh, err := os.Open(o.Path)
	if err != nil {
		return nil, &Error{Op: "open", Path: o.Path, Err: pathless(err)}
	}
	st, err := fh.Stat()
	if err == nil && localVersion(st) != o.version {
		what := fmt.Sprintf("%d bytes, now %d", o.Size, st.Size())
		if st.Size() == o.Size {
			what = "same size, another modification or change time"
		}
		err = errkind.Errorf(ErrChanged, "the file changed since it was listed (%s): restart to read it as it is now", what)
	}
	if err != nil {
		fh.Close()
		return nil, &Error{Op: "open", Path: o.Path, Err: err}
	}
	return &localReader{f: fh, path: o.Path, size: o.Size}, nil
}

type localReader struct {
	f    *os.File
	path string
	size int64
}

// ReadAt implements Reader. A local read is not interrupted once started; ctx is checked
// before it.
func (r *localReader) ReadAt(ctx context.Context, p []byte, off int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if off < 0 || off > r.size || int64(len(p)) > r.size-off {
		return &Error{Op: "read", Path: r.path, Err: fmt.Errorf("%w: %d bytes at offset %d of a %d-byte file", io.ErrUnexpectedEOF, len(p), off, r.size)}
	}
	n, err := r.f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = fmt.Errorf("%w: %d of %d bytes at offset %d (the file shrank?)", io.ErrUnexpectedEOF, n, len(p), off)
	}
	return &Error{Op: "read", Path: r.path, Err: pathless(err)}
}

func (r *localReader) Close() error {
	if err := r.f.Close(); err != nil {
		return &Error{Op: "close", Path: r.path, Err: pathless(err)}
	}
	return nil
}

// localObject describes the file at path, of stat st. Its identity is its path (absolute,
// symbolic links resolved, so that a dataset named through a link or a relative path
// finds the same cache entries), size, modification and change times: a file rewritten
// in place, even with the same size and its old mtime put back (cp -p, rsync -t), gets
// another, since no tool can set the change time back. (A chmod, chown or rename changes
// it too: a few cache misses, never stale data.)
func localObject(path string, st os.FileInfo) (Object, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		p = path
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	v := localVersion(st)
	return Object{Path: path, Size: st.Size(), Identity: p + "\x00" + v, version: v}, nil
}

// localVersion is size, mtime and change time (ns; 0 where the system does not say).
func localVersion(st os.FileInfo) string {
	var ctime int64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ctime = sys.Ctim.Nano()
	}
	return fmt.Sprintf("%d\x00%d\x00%d", st.Size(), st.ModTime().UnixNano(), ctime)
}
