package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// walkParquet lists the *.parquet files below dir, at any depth, leaving out hidden and
// "_" names and everything below them. dir itself may be a link; links below it are
// followed to files only.
func walkParquet(ctx context.Context, dir string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: pathless(err)}
	}
	var paths []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case hidden(e.Name()):
		case e.IsDir():
			sub, err := walkParquet(ctx, p)
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
