package cache

import (
	"errors"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// Entry is a committed entry mapped read-only. Its views stay valid until Close, even
// if the entry is evicted meanwhile (eviction unlinks; the mapping keeps the pages).
type Entry struct {
	mem     []byte
	tensors [][]byte
	rows    int64
}

// Tensors are the entry's regions, one per size given to Create; writing to them faults.
func (e *Entry) Tensors() [][]byte { return e.tensors }

// Rows is Meta.Rows of the entry.
func (e *Entry) Rows() int64 { return e.rows }

// Size is the entry file's size in bytes: header, regions and alignment.
func (e *Entry) Size() int64 { return int64(len(e.mem)) }

// WillNeed asks the kernel to read the whole entry ahead, before its rows are gathered.
func (e *Entry) WillNeed() {
	if e.mem != nil {
		unix.Madvise(e.mem, unix.MADV_WILLNEED)
	}
}

// Close unmaps the entry; its views are invalid afterwards. Closing twice is harmless.
func (e *Entry) Close() {
	if e.mem != nil {
		unix.Munmap(e.mem)
		e.mem, e.tensors = nil, nil
	}
}

// Get returns the entry for key, or false: not cached, another process evicted it, or it
// was found corrupt (counted in Stats.Corrupt and removed). The first Get of a file in
// this process checks its CRC-32 over all its bytes; later ones only validate the header.
func (c *Cache) Get(key Key) (*Entry, bool) {
	if c.closed.Load() {
		c.stats.misses.Add(1)
		return nil, false
	}
	sh := c.shard(key)
	if !sh.has(key) {
		c.stats.misses.Add(1)
		return nil, false
	}
	e, id, err := c.mapEntry(sh, key)
	if err != nil {
		c.stats.misses.Add(1)
		switch {
		case errors.Is(err, unix.ENOENT):
			sh.drop(key, nil) // evicted by another process; forget it if the manifest still lists it
		case isCorrupt(err):
			c.stats.corrupt.Add(1)
			c.warn("corrupt", "removed corrupt entry: %v", err)
			sh.drop(key, id)
		case errors.Is(err, ErrVersion):
			c.warn("entry version", "removed entry of another version: %v", err)
			sh.drop(key, id)
		default:
			c.warn("get", "%v", err)
		}
		return nil, false
	}
	sh.used(key, *id)
	c.stats.hits.Add(1)
	c.stats.hitBytes.Add(e.Size())
	return e, true
}

// mapEntry maps key's file read-only and validates it: header always, CRC unless this
// process already checked this very file. On a validation error it returns the file's id.
func (c *Cache) mapEntry(sh *shard, key Key) (*Entry, *fileID, error) {
	path := sh.path(entryName(key))
	fd, err := unix.Open(path, openFlags(false), 0)
	if err != nil {
		return nil, nil, &Error{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd) // the mapping outlives the descriptor
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &Error{Op: "stat", Path: path, Err: err}
	}
	id := idOf(&st)
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < headerSize || st.Size > maxEntrySize {
		return nil, &id, &Error{Op: "validate", Path: path, Err: kindf(ErrBadSize, "file of %d bytes (mode %o)", st.Size, st.Mode)}
	}
	// MAP_POPULATE maps every page now, in one call: the first checksum and the gathers
	// would otherwise take a page fault per 4 KiB (measured: most of a warm epoch's CPU).
	mem, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, nil, &Error{Op: "map", Path: path, Err: err}
	}
	h, err := c.validate(sh, key, id, mem)
	if err != nil {
		unix.Munmap(mem)
		return nil, &id, &Error{Op: "validate", Path: path, Err: err}
	}
	e := &Entry{mem: mem, rows: h.rows}
	e.tensors = views(mem, h.lay)
	return e, &id, nil
}

// validate checks the header of the mapped file mem and, unless this process already
// checked this very file, its CRC. A file truncated by someone else after it was mapped
// would fault on access: that fault becomes an error here, not a crash.
func (c *Cache) validate(sh *shard, key Key, id fileID, mem []byte) (h header, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = kindf(ErrBadSize, "file shrank while it was read: %v", r)
		}
	}()
	h, err = parseHeader(mem, id.size)
	if err == nil && h.key != key {
		err = kindf(ErrBadKey, "header holds key %v", h.key)
	}
	if err == nil && !sh.isVerified(key, id) {
		c.stats.checksums.Add(1)
		if sum := checksum(mem, h.lay); sum != h.crc {
			err = kindf(ErrChecksum, "CRC-32 %08x, header says %08x", sum, h.crc)
		}
	}
	return h, err
}

// Reuse counts a hit on key's entry, which the caller still has mapped from an earlier
// Get or Commit, if key is still committed as far as this process knows. false: it was
// evicted or dropped (close the old mapping; a Get tells whether another process made it
// again). The bytes of a mapping never change: the key names them.
func (c *Cache) Reuse(key Key, size int64) bool {
	if c.closed.Load() || !c.shard(key).has(key) {
		return false
	}
	c.shard(key).touch(key)
	c.stats.hits.Add(1)
	c.stats.hitBytes.Add(size)
	return true
}

// Has says whether key is committed, as this process last read its shard's manifest;
// it maps nothing and checks nothing (Get does).
func (c *Cache) Has(key Key) bool {
	return !c.closed.Load() && c.shard(key).has(key)
}
