package cache

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// lockTimeout bounds a wait for a shard's lock; holders keep it for one manifest write
// (or one scan of the shard at Open).
const lockTimeout = 10 * time.Second

// shard is one sNN dir: its lock, this process's view of its manifest, and what this
// process knows about its entries.
type shard struct {
	c      *Cache
	i      int // index among the dir's shards
	dir    string
	lockFD int // sNN/lock: flock(LOCK_EX) around every read-modify-write of the manifest

	// mu excludes this process's goroutines from each other: they share lockFD, and flock
	// does not separate holders of one open file description. It guards all below.
	mu       sync.Mutex
	m        *manifest      // the manifest as last read or written; nil before the first
	ino      uint64         // inode of the manifest file m came from
	verified map[Key]fileID // entry files whose data CRC this process checked or wrote
	lastUse  map[Key]int64  // LRU clock of entries this process used
	counted  [2]int64       // resident bytes and entries that m adds to Stats
}

// fileID identifies one entry file, so a file replaced under the same name is checked anew.
type fileID struct {
	ino         uint64
	size, mtime int64
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}
}

func (sh *shard) path(name string) string { return filepath.Join(sh.dir, name) }

// update runs fn on the current manifest with the shard locked (in this process and on
// disk) and writes the manifest if fn or the load changed it. fn's error is returned
// after what it changed is written: an eviction must reach the manifest even if the
// admission that caused it fails later.
func (sh *shard) update(fn func(m *manifest) (changed bool, err error)) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.updateLocked(fn)
}

func (sh *shard) updateLocked(fn func(m *manifest) (bool, error)) error {
	if sh.c.closed.Load() {
		return &Error{Op: "update", Path: sh.dir, Err: ErrClosed}
	}
	if err := flockWait(sh.lockFD, unix.LOCK_EX, lockTimeout); err != nil {
		return &Error{Op: "lock", Path: sh.path(lockName), Err: err}
	}
	defer unix.Flock(sh.lockFD, unix.LOCK_UN)
	m, ino, changed, err := sh.loadForUpdate()
	if err != nil {
		return err
	}
	var ferr error
	if fn != nil {
		var c bool
		c, ferr = fn(m)
		changed = changed || c
	}
	if changed {
		if ino, err = sh.write(m); err != nil {
			sh.m = nil // the file on disk is not m: read it again next time
			return errors.Join(ferr, err)
		}
	}
	sh.setView(m, ino)
	return ferr
}

// loadForUpdate reads the manifest (lock held), rebuilding it from the shard's files if it
// is missing or corrupt, and drops reservations of writers that are gone.
func (sh *shard) loadForUpdate() (*manifest, uint64, bool, error) {
	m, ino, err := sh.read()
	switch {
	case err == nil:
		return m, ino, sh.purge(m), nil
	case errors.Is(err, fs.ErrNotExist) || isCorrupt(err):
		m = newManifest()
		if n, _ := sh.scan(m); isCorrupt(err) || n > 0 {
			sh.c.stats.corrupt.Add(1)
			sh.c.warn("manifest", "rebuilt %s from its %d entry files: %v", sh.path(manifestName), n, err)
		}
		sh.purge(m)
		return m, 0, true, nil
	}
	return nil, 0, false, err
}

// refreshLocked re-reads the manifest if another process changed it since this process
// last saw it (mu held, no flock: manifests are replaced by rename, never written in place).
func (sh *shard) refreshLocked() {
	if ino, gen, err := peekManifest(sh.path(manifestName)); err == nil && sh.m != nil && ino == sh.ino && gen == sh.m.gen {
		return
	}
	if m, ino, err := sh.read(); err == nil {
		sh.setView(m, ino)
		return
	}
	// Missing or corrupt: rebuild under the lock, where it is counted once.
	if err := sh.updateLocked(nil); err != nil {
		sh.c.warn("refresh", "%v", err)
	}
}

// setView makes m this process's view of the shard and moves its totals into Stats.
func (sh *shard) setView(m *manifest, ino uint64) {
	var bytes int64
	for _, r := range m.entries {
		bytes += r.size
	}
	n := int64(len(m.entries))
	sh.c.stats.resident.Add(bytes - sh.counted[0])
	sh.c.stats.entries.Add(n - sh.counted[1])
	sh.counted = [2]int64{bytes, n}
	sh.m, sh.ino = m, ino
}

// has reports whether the key is committed, re-reading the manifest when the key is not
// in this process's view and another process may have committed it since.
func (sh *shard) has(k Key) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m != nil {
		if _, ok := sh.m.entries[k]; ok {
			return true
		}
	}
	sh.refreshLocked()
	if sh.m == nil {
		return false
	}
	_, ok := sh.m.entries[k]
	return ok
}

// isVerified reports whether this process already checked (or wrote) this very file.
func (sh *shard) isVerified(k Key, id fileID) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	v, ok := sh.verified[k]
	return ok && v == id
}

// used records a use of k: it is verified as the file id, and its LRU age is now.
func (sh *shard) used(k Key, id fileID) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.verified[k] = id
	sh.lastUse[k] = tick()
}

// touch records a use of k that maps nothing (Cache.Reuse), for LRU eviction.
func (sh *shard) touch(k Key) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.lastUse[k] = tick()
}

// drop removes k's file if it is still the file id (found bad by this process), or
// forgets k if its file is gone, and takes k out of the manifest.
func (sh *shard) drop(k Key, id *fileID) {
	err := sh.update(func(m *manifest) (bool, error) {
		path := sh.path(entryName(k))
		if id != nil && sameFile(path, id.ino) {
			unix.Unlink(path)
		}
		delete(sh.verified, k)
		delete(sh.lastUse, k)
		if _, listed := m.entries[k]; !listed || unix.Access(path, unix.F_OK) == nil {
			return false, nil
		}
		delete(m.entries, k)
		return true, nil
	})
	if err != nil {
		sh.c.warn("drop", "%v", err)
	}
}
