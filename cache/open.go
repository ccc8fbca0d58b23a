package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/internal/units"
)

// Options configure Open.
type Options struct {
	Dir    string
	Size   int64                            // byte budget over all shards (> 0)
	Shards int                              // 0 = 16; a dir keeps the count it was made with
	Log    func(format string, args ...any) // warnings; each kind printed once per process
}

// Cache is one process's handle on a cache dir. Its methods are safe for concurrent use.
type Cache struct {
	dir    string
	log    func(format string, args ...any)
	lockFD int   // DIR/lock, held shared while open: Clear needs it exclusive
	budget int64 // bytes per shard
	shards []*shard
	oracle atomic.Pointer[oracleBox]
	stats  counters
	seq    atomic.Uint64 // names temp files
	closed atomic.Bool
}

// Open opens or creates the cache in opt.Dir. It reconciles every shard with its files
// (temp files of dead writers removed, orphaned entries adopted, bad files dropped) and
// warns about file systems where a cache is costly or unsafe.
func Open(opt Options) (*Cache, error) {
	if opt.Dir == "" || opt.Size <= 0 || opt.Shards < 0 || opt.Shards > MaxShards {
		return nil, &Error{Op: "open", Path: opt.Dir, Err: fmt.Errorf(
			"invalid options: want a dir, Size > 0 and Shards in 0..%d (got Size %d, Shards %d)", MaxShards, opt.Size, opt.Shards)}
	}
	if opt.Shards == 0 {
		opt.Shards = 16
	}
	c := &Cache{dir: opt.Dir, log: opt.Log, lockFD: -1}
	if err := c.lockDir(); err != nil {
		return nil, err
	}
	in, err := readInfo(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		in, err = initInfo(c.dir, opt.Shards)
	}
	if err != nil {
		c.Close()
		if errors.Is(err, ErrFormat) {
			return nil, fmt.Errorf("%w; it is never read by this build: `shmloader cache clear %s` empties it", err, c.dir)
		}
		return nil, err
	}
	if in.shards != opt.Shards {
		c.warn("shards", "%s was made with %d shards; using %d, not the %d asked for", c.dir, in.shards, in.shards, opt.Shards)
	}
	if err := c.openShards(in.shards); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.setBudget(opt.Size); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// lockDir creates the dir if needed and holds its lock file shared.
func (c *Cache) lockDir() error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return &Error{Op: "open", Path: c.dir, Err: fmt.Errorf("cannot create the cache dir: %w", err)}
	}
	path := filepath.Join(c.dir, dirLock)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return &Error{Op: "open", Path: c.dir, Err: fmt.Errorf("cache dir is not writable: %w", err)}
	}
	if err := unix.Access(c.dir, unix.W_OK); err != nil {
		unix.Close(fd)
		return &Error{Op: "open", Path: c.dir, Err: fmt.Errorf("cache dir is not writable: %w", err)}
	}
	if err := flockWait(fd, unix.LOCK_SH, lockTimeout); err != nil {
		unix.Close(fd)
		return &Error{Op: "lock", Path: path, Err: fmt.Errorf("%w: is `shmloader cache clear` running?", err)}
	}
	c.lockFD = fd
	return nil
}

// openShards opens every shard dir, then reconciles each with its files.
func (c *Cache) openShards(n int) error {
	for i := range n {
		sh := &shard{c: c, i: i, dir: filepath.Join(c.dir, shardName(i)), lockFD: -1,
			verified: map[Key]fileID{}, lastUse: map[Key]int64{}}
		c.shards = append(c.shards, sh)
		if err := os.Mkdir(sh.dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return &Error{Op: "open", Path: sh.dir, Err: err}
		}
		fd, err := unix.Open(sh.path(lockName), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		if err != nil {
			return &Error{Op: "open", Path: sh.path(lockName), Err: err}
		}
		sh.lockFD = fd
	}
	for _, sh := range c.shards {
		err := sh.update(func(m *manifest) (bool, error) {
			_, changed := sh.scan(m)
			return changed, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// setBudget warns about the dir's file system and lowers the budget to what fits on it.
func (c *Cache) setBudget(size int64) error {
	kind, free, err := statDir(c.dir)
	if err != nil {
		return err
	}
	switch kind {
	case "ram":
		c.warn("ram", "%s is on tmpfs or ramfs: cached entries take RAM (budget %s)", c.dir, units.Bytes(size))
	case "network":
		c.warn("network", "%s is on a network or FUSE file system: flock and shared mmap may not be safe there", c.dir)
	}
	used := c.Stats().ResidentBytes
	for _, sh := range c.shards {
		sh.mu.Lock()
		if sh.m != nil {
			used += sh.m.used() - sh.counted[0] // reservations of live writers too
		}
		sh.mu.Unlock()
	}
	if fits := free + used; fits < size {
		c.warn("space", "%s has %s free and %s cached, less than the %s budget: using a budget of %s",
			c.dir, units.Bytes(free), units.Bytes(used), units.Bytes(size), units.Bytes(fits))
		size = fits
	}
	c.budget = size / int64(len(c.shards))
	return nil
}

// Dir is the cache dir.
func (c *Cache) Dir() string { return c.dir }

// Budget is the byte budget in use over all shards: Options.Size, or less if the disk has
// less room.
func (c *Cache) Budget() int64 { return c.budget * int64(len(c.shards)) }

// Shards is the dir's shard count.
func (c *Cache) Shards() int { return len(c.shards) }

// Close releases the dir's locks. Entries already returned stay valid until their own
// Close; writers still open fail at Commit.
func (c *Cache) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	for _, sh := range c.shards {
		sh.mu.Lock()
		if sh.lockFD >= 0 {
			unix.Close(sh.lockFD)
			sh.lockFD = -1
		}
		sh.mu.Unlock()
	}
	if c.lockFD >= 0 {
		unix.Close(c.lockFD)
	}
	return nil
}

func (c *Cache) shard(k Key) *shard { return c.shards[k.shard(len(c.shards))] }
