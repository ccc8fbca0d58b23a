package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// listFiles resolves a pattern to regular files sorted by path: a file is itself, a
// directory is its *.parquet files (not recursive), anything with glob metacharacters is a
// glob. Directories that a glob matches are skipped, so "data/*" works beside subfolders.
func listFiles(pattern string) ([]string, error) {
	if pattern == "" {
		return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: kindf(ErrNoFiles, "empty dataset path")}
	}
	var paths []string
	if strings.ContainsAny(pattern, "*?[") {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: fmt.Errorf("bad glob: %w", err)}
		}
		paths = m
	} else {
		st, err := os.Stat(pattern)
		if err != nil {
			err = pathless(err)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				err = resolvedAgainstCwd(pattern, err)
			}
			return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: err}
		}
		if !st.IsDir() {
			return []string{pattern}, nil
		}
		ents, err := os.ReadDir(pattern)
		if err != nil {
			return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: pathless(err)}
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".parquet") {
				paths = append(paths, filepath.Join(pattern, e.Name()))
			}
		}
	}
	files := paths[:0]
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, &Error{Op: "open", Path: p, RowGroup: -1, Err: pathless(err)}
		}
		if st.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		err := resolvedAgainstCwd(pattern, kindf(ErrNoFiles, "no Parquet files match"))
		return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: err}
	}
	sort.Strings(files)
	return files, nil
}

// resolvedAgainstCwd adds to err, a failure to find the files of pattern, where a
// relative pattern was looked for: "(relative to the current directory /home/u/run:
// /home/u/run/data/x)". Relative patterns are resolved against the process's current
// directory, wherever they were written (a config file included).
func resolvedAgainstCwd(pattern string, err error) error {
	if filepath.IsAbs(pattern) {
		return err
	}
	wd, werr := os.Getwd()
	if werr != nil {
		return fmt.Errorf("%w (relative to the current directory, which cannot be found: %v)", err, werr)
	}
	return fmt.Errorf("%w (relative to the current directory %s: %s)", err, wd, filepath.Join(wd, pattern))
}

// pathless drops the *fs.PathError around err: Error already names the path.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
