package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// testHookClear, when set by a test, runs before each removal Clear makes: a test
// stops Clear there to see what a crash at that point leaves.
var testHookClear func(path string)

// remove is os.RemoveAll behind testHookClear.
func remove(path string) error {
	if testHookClear != nil {
		testHookClear(path)
	}
	return os.RemoveAll(path)
}

// Clear empties the cache in dir, whatever its format version: entries, manifests,
// temp files, shard dirs, and last the info file. It refuses with ErrLive while any
// process has the dir open. Each step leaves a dir that Open accepts: entries go before
// the manifest that lists them (Open drops records of missing files), and the info file,
// which fixes the format and shard count, goes last.
func Clear(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return &Error{Op: "clear", Path: dir, Err: err}
	}
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	if !looksLikeCache(names) {
		return &Error{Op: "clear", Path: dir, Err: ErrNotCache}
	}
	lock := filepath.Join(dir, dirLock)
	fd, err := unix.Open(lock, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return &Error{Op: "clear", Path: lock, Err: err}
	}
	defer unix.Close(fd)
	ok, err := tryFlock(fd, unix.LOCK_EX)
	if err != nil {
		return &Error{Op: "lock", Path: lock, Err: err}
	}
	if !ok {
		return &Error{Op: "clear", Path: dir, Err: liveError(lock)}
	}
	// Read again under the lock: an Open may have made shards since the first look.
	if des, err = os.ReadDir(dir); err != nil {
		return &Error{Op: "clear", Path: dir, Err: err}
	}
	names = names[:0]
	for _, de := range des {
		names = append(names, de.Name())
	}
	for _, name := range names {
		if _, ok := parseShardName(name); ok {
			if err := clearShard(filepath.Join(dir, name)); err != nil {
				return err
			}
		} else if isInfoTemp(name) {
			remove(filepath.Join(dir, name))
		}
	}
	if err := remove(filepath.Join(dir, infoName)); err != nil {
		return &Error{Op: "clear", Path: filepath.Join(dir, infoName), Err: err}
	}
	return nil
}

// clearShard removes a shard dir: entries first, then its manifest, then the rest.
func clearShard(sdir string) error {
	des, err := os.ReadDir(sdir)
	if err != nil {
		return &Error{Op: "clear", Path: sdir, Err: err}
	}
	var rest []string
	for _, de := range des {
		switch n := de.Name(); {
		case strings.HasSuffix(n, entrySuffix) && !de.IsDir():
			if err := remove(filepath.Join(sdir, n)); err != nil {
				return &Error{Op: "clear", Path: filepath.Join(sdir, n), Err: err}
			}
		case n != manifestName && n != lockName:
			rest = append(rest, n)
		}
	}
	rest = append(rest, manifestName, lockName)
	for _, n := range rest {
		if err := remove(filepath.Join(sdir, n)); err != nil {
			return &Error{Op: "clear", Path: filepath.Join(sdir, n), Err: err}
		}
	}
	if err := remove(sdir); err != nil {
		return &Error{Op: "clear", Path: sdir, Err: err}
	}
	return nil
}

// liveError says who holds the dir, when /proc/locks tells.
func liveError(lock string) error {
	pids := lockers(lock)
	if len(pids) == 0 {
		return fmt.Errorf("%w; stop it first", ErrLive)
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return fmt.Errorf("%w (pid %s); stop it first", ErrLive, strings.Join(s, ", "))
}
