package cache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The dir's info file: three lines of text, so `cat` explains a dir to a person.
//
//	shmloader cache
//	format 1
//	shards 16
//
// It is written once, by the first Open, and never changed: the format and the shard
// count decide where every key lives.
const (
	infoName  = "shmloader-cache"
	infoTitle = "shmloader cache"
	dirLock   = "lock"
	maxInfo   = 4096
)

// MaxShards bounds Options.Shards (shard dirs are s00 … s99).
const MaxShards = 100

type info struct{ format, shards int }

// readInfo parses dir's info file; a missing file is reported as fs.ErrNotExist. A file
// of another format version is parsed as far as its version and fails with ErrFormat.
func readInfo(dir string) (info, error) {
	path := filepath.Join(dir, infoName)
	f, err := os.Open(path)
	if err != nil {
		return info{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxInfo+1))
	if err != nil {
		return info{}, &Error{Op: "read", Path: path, Err: err}
	}
	in, err := parseInfo(b)
	if err != nil {
		return in, &Error{Op: "read", Path: path, Err: err}
	}
	return in, nil
}

func parseInfo(b []byte) (info, error) {
	var in info
	if len(b) > maxInfo {
		return in, kindf(ErrBadSize, "info file over %d bytes", maxInfo)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if lines[0] != infoTitle {
		return in, kindf(ErrBadMagic, "first line %q, want %q", clip(lines[0], 40), infoTitle)
	}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, " ")
		n, err := strconv.Atoi(v)
		switch {
		case k != "format" && k != "shards":
			continue // a later format may add lines; the format line decides
		case err != nil:
			return in, kindf(ErrBadRecord, "line %q", clip(l, 40))
		case k == "format":
			in.format = n
		default:
			in.shards = n
		}
	}
	if in.format != FormatVersion {
		return in, kindf(ErrFormat, "format %d, this build reads format %d", in.format, FormatVersion)
	}
	if in.shards < 1 || in.shards > MaxShards {
		return in, kindf(ErrBadRecord, "shards %d, want 1..%d", in.shards, MaxShards)
	}
	return in, nil
}

func (in info) encode() []byte {
	return fmt.Appendf(nil, "%s\nformat %d\nshards %d\n", infoTitle, in.format, in.shards)
}

// initInfo writes the info file of a new dir, or returns the one another process wrote
// first: the file appears whole (link of a finished temp file) and is never replaced.
func initInfo(dir string, shards int) (info, error) {
	path := filepath.Join(dir, infoName)
	tmp := filepath.Join(dir, fmt.Sprintf("%s.%d%s", infoName, pid, tempSuffix))
	want := info{format: FormatVersion, shards: shards}
	if err := os.WriteFile(tmp, want.encode(), 0o644); err != nil {
		return info{}, &Error{Op: "create", Path: tmp, Err: err}
	}
	defer os.Remove(tmp)
	err := os.Link(tmp, path)
	if err == nil {
		return want, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return info{}, &Error{Op: "create", Path: path, Err: err}
	}
	return readInfo(dir)
}

// isInfoTemp reports whether name is a temp file of initInfo.
func isInfoTemp(name string) bool {
	return strings.HasPrefix(name, infoName+".") && strings.HasSuffix(name, tempSuffix)
}

// looksLikeCache reports whether dir has anything a cache puts there, so Clear never
// empties a dir that was never a cache.
func looksLikeCache(names []string) bool {
	for _, n := range names {
		if _, ok := parseShardName(n); ok || n == infoName || n == dirLock {
			return true
		}
	}
	return false
}
