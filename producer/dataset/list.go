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
// directory is every *.parquet file below it, at any depth, and anything with glob
// metacharacters is a glob. Below a directory, and in a glob's matches (below its
// wildcards), names that start with "." or "_" are skipped, files and directories alike,
// as Spark and pyarrow do (_SUCCESS, _delta_log/, _temporary/, .part-0.parquet.crc),
// unless the glob's own element there starts with that character. Directories that a glob matches
// are skipped, so "data/*" works beside subfolders, and links to directories are not
// followed inside a directory (no loops).
//
// root is the directory under which the files' hive-style key=value folders name
// partition columns: the directory itself, or for a glob the folders before its first
// element with metacharacters; "" for a single file.
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

func listFiles(pattern string) (files []string, root string, err error) {
	if pattern == "" {
		return nil, "", &Error{Op: "open", Path: pattern, RowGroup: -1, Err: kindf(ErrNoFiles, "empty dataset path")}
	}
	if scheme, ok := urlScheme(pattern); ok {
		return nil, "", &Error{Op: "open", Path: pattern, RowGroup: -1, Err: fmt.Errorf("%s:// URLs are not read yet: "+
			"this shmloader reads local files only (a local disk or a mounted file system); copy or mount the data there", scheme)}
	}
	var paths []string
	if strings.ContainsAny(pattern, "*?[") {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return nil, "", &Error{Op: "open", Path: pattern, RowGroup: -1, Err: fmt.Errorf("bad glob: %w", err)}
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
			return nil, "", &Error{Op: "open", Path: pattern, RowGroup: -1, Err: err}
		}
		if !st.IsDir() {
			return []string{pattern}, "", nil
		}
		if paths, err = walkParquet(pattern); err != nil {
			return nil, "", err
		}
		root = pattern
	}
	files = paths[:0]
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, "", &Error{Op: "open", Path: p, RowGroup: -1, Err: pathless(err)}
		}
		if st.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		err := resolvedAgainstCwd(pattern, kindf(ErrNoFiles, "no Parquet files match"))
		return nil, "", &Error{Op: "open", Path: pattern, RowGroup: -1, Err: err}
	}
	sort.Strings(files)
	return files, root, nil
}

// walkParquet lists the *.parquet files below dir, at any depth, leaving out hidden and
// "_" names and everything below them. dir itself may be a link; links below it are
// followed to files only.
func walkParquet(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "open", Path: dir, RowGroup: -1, Err: pathless(err)}
	}
	var paths []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case hidden(e.Name()):
		case e.IsDir():
			sub, err := walkParquet(p)
			if err != nil {
				return nil, err
			}
			paths = append(paths, sub...)
		case strings.HasSuffix(e.Name(), ".parquet"):
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// hidden: a name that dataset listings leave out (".crc", "_SUCCESS", "_delta_log").
func hidden(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// hiddenMatch says whether glob match p has a hidden name below root where pattern's
// element does not ask for one.
func hiddenMatch(root, pattern, p string) bool {
	pe := strings.Split(filepath.Clean(pattern), string(filepath.Separator))
	me := strings.Split(filepath.Clean(p), string(filepath.Separator))
	skip := 0 // the elements of root, which every match starts with
	if r := filepath.Clean(root); r != "." {
		skip = len(strings.Split(r, string(filepath.Separator)))
	}
	for i := skip; i < len(me) && i < len(pe); i++ {
		if hidden(me[i]) && !hidden(pe[i]) {
			return true
		}
	}
	return false
}

// globRoot is the folders of pattern before its first element with metacharacters.
func globRoot(pattern string) string {
	dir := filepath.Dir(pattern)
	for strings.ContainsAny(dir, "*?[") {
		dir = filepath.Dir(dir)
	}
	return dir
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
