package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
			return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: pathless(err)}
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
		return nil, &Error{Op: "open", Path: pattern, RowGroup: -1, Err: kindf(ErrNoFiles, "no Parquet files match")}
	}
	sort.Strings(files)
	return files, nil
}

// pathless drops the *fs.PathError around err: Error already names the path.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
