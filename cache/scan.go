package cache

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// scan reconciles m with the shard's files (lock held): it adopts entry files m does not
// list (a writer killed between rename and manifest write) after validating their
// headers, drops records whose files are gone, removes temp files nobody holds, and
// removes corrupt entries and stray files, counting each. It returns how many entry
// files are listed afterwards and whether m changed.
func (sh *shard) scan(m *manifest) (int, bool) {
	des, err := os.ReadDir(sh.dir)
	if err != nil {
		sh.c.warn("scan", "scan %s: %v", sh.dir, err)
		return len(m.entries), false
	}
	changed := false
	seen := make(map[Key]bool, len(des))
	for _, de := range des {
		name := de.Name()
		k, isEntry := parseEntryName(name)
		switch {
		case name == lockName || name == manifestName:
		case de.IsDir():
			sh.c.warn("stray dir", "%s is not part of the cache; left alone", sh.path(name))
		case strings.HasSuffix(name, tempSuffix):
			changed = sh.scanTemp(m, name) || changed
		case isEntry && k.shard(len(sh.c.shards)) == sh.i:
			seen[k] = true
			if _, ok := m.entries[k]; !ok {
				changed = sh.adopt(m, k) || changed
			}
		default:
			sh.c.stats.corrupt.Add(1)
			sh.c.warn("stray file", "removed %s: not a cache file", sh.path(name))
			os.Remove(sh.path(name))
		}
	}
	for k := range m.entries {
		if !seen[k] {
			delete(m.entries, k)
			changed = true
		}
	}
	return len(m.entries), changed
}

// scanTemp handles one *.tmp file: a live writer's is (re)listed as a reservation; one
// nobody holds is left by a killed process and removed.
func (sh *shard) scanTemp(m *manifest, name string) bool {
	k, _, size, ok := parseTemp(name)
	if !ok {
		// Manifest temps are written under the shard lock, which the caller holds: any
		// that exists was left by a killed process. Anything else is stray.
		if !strings.HasPrefix(name, manifestName+".") {
			sh.c.stats.corrupt.Add(1)
			sh.c.warn("stray file", "removed %s: not a cache file", sh.path(name))
		}
		os.Remove(sh.path(name))
		return false
	}
	if !sh.tempHeld(name) {
		_, listed := m.pending[name]
		delete(m.pending, name)
		return listed
	}
	if _, listed := m.pending[name]; listed || size < headerSize || size > maxEntrySize {
		return false
	}
	m.pending[name] = pend{key: k, size: size}
	return true
}

// purge drops reservations whose writer is gone (lock held). A writer killed after its
// rename but before its manifest write left a complete entry: that one is adopted.
func (sh *shard) purge(m *manifest) bool {
	changed := false
	for name, p := range m.pending {
		if sh.tempHeld(name) {
			continue
		}
		delete(m.pending, name)
		changed = true
		if _, ok := m.entries[p.key]; !ok && unix.Access(sh.path(entryName(p.key)), unix.F_OK) == nil {
			sh.adopt(m, p.key)
		}
	}
	return changed
}

// tempHeld reports whether a writer holds the temp file name; if none does, the file is
// removed. Writers create and lock their temp files with the shard lock held, as the
// caller does now, so a file is never seen between its creation and its lock.
func (sh *shard) tempHeld(name string) bool {
	path := sh.path(name)
	fd, err := unix.Open(path, openFlags(true), 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	ok, err := tryFlock(fd, unix.LOCK_EX)
	if err != nil || !ok {
		return err == nil
	}
	unix.Unlink(path)
	return false
}

// adopt lists k's entry file in m if its header is valid; a bad one is removed and counted.
func (sh *shard) adopt(m *manifest, k Key) bool {
	path := sh.path(entryName(k))
	h, st, err := readHeader(path)
	if err == nil && h.key != k {
		err = kindf(ErrBadKey, "header holds key %v", h.key)
	}
	switch {
	case err == nil:
		m.entries[k] = rec{size: h.lay.size, rows: h.rows, config: h.config, label: h.label, created: st.Mtim.Nano()}
		return true
	case errors.Is(err, ErrVersion):
		sh.c.warn("entry version", "removed %s: %v", path, err)
	case isCorrupt(err):
		sh.c.stats.corrupt.Add(1)
		sh.c.warn("corrupt", "removed corrupt entry %s: %v", path, err)
	default:
		sh.c.warn("adopt", "%v", err)
		return false
	}
	unix.Unlink(path)
	return false
}

// readHeader validates the header page of the entry file at path against its size.
func readHeader(path string) (header, *unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Open(path, openFlags(false), 0)
	if err != nil {
		return header{}, nil, &Error{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return header{}, nil, &Error{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return header{}, nil, &Error{Op: "validate", Path: path, Err: kindf(ErrBadRecord, "not a regular file")}
	}
	page := make([]byte, headerSize)
	if n, err := unix.Pread(fd, page, 0); err != nil || int64(n) < min(st.Size, headerSize) {
		return header{}, nil, &Error{Op: "read", Path: path, Err: errors.Join(err, errors.New("short read"))}
	}
	h, err := parseHeader(page, st.Size)
	if err != nil {
		return h, &st, &Error{Op: "validate", Path: path, Err: err}
	}
	return h, &st, nil
}
