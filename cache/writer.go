package cache

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Writer is an entry being written: the caller fills Tensors, then Commits or Aborts.
// One goroutine uses a Writer at a time.
type Writer struct {
	c    *Cache
	sh   *shard
	key  Key
	meta Meta
	lay  layout
	tmp  string // temp file name in the shard dir
	fd   int    // the temp file, flock(LOCK_EX) while the writer lives: it is not stale
	mem  []byte // MAP_SHARED, read-write, the whole file
	done bool
}

// Create reserves room for an entry of len(sizes) tensors and returns a writer whose
// Tensors are the regions to fill. Errors: ErrNotAdmitted (the policy keeps what is cached
// instead), ErrTooLarge (bigger than a shard's budget), ErrNoSpace (the disk is full),
// or another *Error that names the file.
func (c *Cache) Create(key Key, meta Meta, sizes []int64) (*Writer, error) {
	sh := c.shard(key)
	lay, err := planLayout(sizes)
	if err == nil && meta.Rows < 0 {
		err = kindf(ErrBadRecord, "rows %d", meta.Rows)
	}
	if err != nil {
		return nil, &Error{Op: "create", Path: sh.path(entryName(key)), Err: err}
	}
	if lay.size > c.budget {
		return nil, &Error{Op: "create", Path: sh.path(entryName(key)),
			Err: fmt.Errorf("%w: %d bytes, a shard holds %d", ErrTooLarge, lay.size, c.budget)}
	}
	meta.Config, meta.Label = clip(meta.Config, maxConfigLen), clip(meta.Label, maxLabelLen)
	w := &Writer{c: c, sh: sh, key: key, meta: meta, lay: lay, fd: -1,
		tmp: tempName(key, c.seq.Add(1), lay.size)}
	err = sh.update(func(m *manifest) (bool, error) {
		evicted, err := c.admit(sh, m, key, lay.size)
		if err != nil {
			return evicted, err
		}
		// Create and lock the temp file before its reservation is written, with the shard
		// lock held: a scan never sees it unlocked while its writer lives.
		if w.fd, err = createTemp(sh.path(w.tmp)); err != nil {
			return evicted, err
		}
		m.pending[w.tmp] = pend{key: key, size: lay.size}
		return true, nil
	})
	if err != nil {
		switch {
		case errors.Is(err, ErrNotAdmitted):
			c.stats.refused.Add(1)
		case !errors.Is(err, ErrClosed):
			c.stats.writeErrors.Add(1)
		}
		if w.fd >= 0 {
			w.Abort()
		}
		return nil, err
	}
	if err := w.mapFile(); err != nil {
		c.stats.writeErrors.Add(1) // the caller reports it (ErrNoSpace: serve warns once)
		w.Abort()
		return nil, err
	}
	return w, nil
}

// admit makes room for size bytes in the shard (lock held), evicting by the policy.
// It reports whether it evicted anything.
func (c *Cache) admit(sh *shard, m *manifest, key Key, size int64) (bool, error) {
	need := m.used() + size - c.budget
	if need <= 0 {
		return false, nil
	}
	var o Oracle
	if b := c.oracle.Load(); b != nil {
		o = b.o
	}
	cands := make([]cand, 0, len(m.entries))
	for k, r := range m.entries {
		age, ok := sh.lastUse[k]
		if !ok {
			age = r.created
		}
		cands = append(cands, cand{key: k, size: r.size, age: age})
	}
	vs, ok := victims(cands, need, o, key)
	if !ok {
		return false, &Error{Op: "create", Path: sh.path(entryName(key)),
			Err: fmt.Errorf("%w: %d bytes needed, %d of %d in use", ErrNotAdmitted, size, m.used(), c.budget)}
	}
	for _, v := range vs {
		// Unlinking leaves every mapping of the file valid, in this and other processes.
		unix.Unlink(sh.path(entryName(v.key)))
		delete(m.entries, v.key)
		delete(sh.lastUse, v.key)
		delete(sh.verified, v.key)
		c.stats.evictions.Add(1)
	}
	return len(vs) > 0, nil
}

// createTemp creates a new temp file exclusively and locks it.
func createTemp(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return -1, &Error{Op: "create", Path: path, Err: err}
	}
	if ok, err := tryFlock(fd, unix.LOCK_EX); !ok || err != nil {
		unix.Close(fd)
		unix.Unlink(path)
		return -1, &Error{Op: "lock", Path: path, Err: errors.Join(err, errors.New("new temp file already locked"))}
	}
	return fd, nil
}

// mapFile gives the temp file all its bytes, then maps it read-write.
func (w *Writer) mapFile() error {
	path := w.sh.path(w.tmp)
	if err := reserve(w.fd, w.lay.size, w.c.warn); err != nil {
		return &Error{Op: "allocate", Path: path, Err: err}
	}
	mem, err := unix.Mmap(w.fd, 0, int(w.lay.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return &Error{Op: "map", Path: path, Err: err}
	}
	w.mem = mem
	return nil
}

// Tensors are the writable regions of the entry, one per size given to Create, in a
// MAP_SHARED mapping of the temp file. They start zeroed and are valid until Commit or
// Abort.
func (w *Writer) Tensors() [][]byte {
	if w.done || w.mem == nil {
		return nil
	}
	return views(w.mem, w.lay)
}

// Key is the key the writer was created for.
func (w *Writer) Key() Key { return w.key }
