package serve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/shmloader/shmloader/cache"
	"github.com/shmloader/shmloader/producer/dataset"
)

// entryKeyVersion starts every cache key: bump it when what an entry holds changes
// meaning without the config or the file changing.
// v2: one region of row records (rowLayout) instead of one region per tensor.
const entryKeyVersion = "shmloader serve entry v2"

// store gives decode tasks the blocks of their row groups: mapped from the cache when it
// holds them, else decoded straight into a new cache entry, else (no cache, not
// admitted, disk full) decoded into anonymous memory. Every path yields the same bytes.
type store struct {
	cache *cache.Cache // nil: no cache
	keys  []cache.Key  // per row group of this node (zero for the others)
	meta  []cache.Meta
	index map[cache.Key]int // key → row group; read-only once built
	anon  *blockSource
	warn  func(format string, args ...any)

	once      sync.Map // warnings already given, by kind
	committed *atomic.Int64
	mapped    *mappings // entries kept mapped between windows (with a cache)
	budget    int64     // the cache's size in bytes (with a cache)
}

// entryKeys keys every row group of groups: file identity, row-group index, the row
// hash input of the config (filter, outputs, transforms) and the entry version.
func entryKeys(ds *dataset.Dataset, rowText []byte, groups []int) ([]cache.Key, []cache.Meta) {
	conf := sha256.Sum256(rowText)
	keys := make([]cache.Key, len(ds.RowGroups))
	meta := make([]cache.Meta, len(ds.RowGroups))
	for _, g := range groups {
		rg := ds.RowGroups[g]
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d\x00", entryKeyVersion, cache.FormatVersion, rg.File.Identity(), rg.Index)
		h.Write(rowText)
		h.Sum(keys[g][:0])
		meta[g] = cache.Meta{Config: fmt.Sprintf("%x", conf[:6]), Label: fmt.Sprintf("%s row group %d", filepath.Base(rg.File.Path), rg.Index)}
	}
	return keys, meta
}

// warnOnce logs one warning per kind for the life of the run.
func (st *store) warnOnce(kind, format string, args ...any) {
	if _, seen := st.once.LoadOrStore(kind, true); !seen {
		st.warn(format, args...)
	}
}

// rowGroup returns row group g's block: cached, or made by decode into a new one.
func (st *store) rowGroup(g int, kept int64, decode func(dst []byte) error) (blk block, hit bool, err error) {
	if st.cache != nil {
		if b, ok := st.mapped.reuse(g, st.keys[g]); ok {
			return b, true, nil
		}
		if e, ok := st.cache.Get(st.keys[g]); ok {
			if b, ok := st.entryBlock(e, g, kept); ok {
				e.WillNeed()
				return st.mapped.keep(g, e, b), true, nil
			}
			st.warnOnce("shape", "cache: an entry for %s has another shape than this config gives; decoding instead", st.meta[g].Label)
			e.Close()
		}
		if b, ok, err := st.decodeToCache(g, kept, decode); ok || err != nil {
			return b, false, err
		}
	}
	blk = st.anon.alloc(g)
	if err := decode(blk.data); err != nil {
		blk.release()
		return block{}, false, err
	}
	return blk, false, nil
}

// decodeToCache decodes row group g straight into a new cache entry. ok is false when
// the cache would not take it (the caller decodes into memory instead); err is a
// decoding error.
func (st *store) decodeToCache(g int, kept int64, decode func(dst []byte) error) (block, bool, error) {
	m := st.meta[g]
	m.Rows = kept
	w, err := st.cache.Create(st.keys[g], m, []int64{kept * int64(st.anon.layout.stride)})
	if err != nil {
		st.createFailed(err)
		return block{}, false, nil
	}
	if err := decode(w.Tensors()[0]); err != nil {
		w.Abort()
		return block{}, false, err
	}
	e, err := w.Commit()
	if err == nil {
		st.committed.Add(1)
	}
	if err != nil {
		if errors.Is(err, cache.ErrNoSpace) {
			st.diskFull(err) // the disk filled while committing the manifest
		} else {
			st.warnOnce("commit", "cache: %v; decoding such row groups into memory instead", err)
		}
		return block{}, false, nil
	}
	b, ok := st.entryBlock(e, g, kept)
	if !ok {
		e.Close()
		return b, false, nil
	}
	return st.mapped.keep(g, e, b), true, nil
}

// diskFull warns, once per run, that the cache's disk is full.
func (st *store) diskFull(err error) {
	st.warnOnce("space", "warning: cache disk full (%v): serving what does not fit uncached, nothing is lost", err)
}

func (st *store) createFailed(err error) {
	switch {
	case errors.Is(err, cache.ErrNotAdmitted):
		// The plan needs everything in the cache sooner: counted in the cache's stats.
	case errors.Is(err, cache.ErrNoSpace): // reserving the entry, or writing the manifest
		st.diskFull(err)
	case errors.Is(err, cache.ErrTooLarge):
		st.warnOnce("large", "warning: cache: %v: a row group is larger than a shard's part of cache.size; raise cache.size or lower cache.shards", err)
	default:
		st.warnOnce("create", "warning: cache: %v; serving uncached what it cannot write", err)
	}
}

// entryBlock views a cache entry as row group g's block, if its shape is what this
// config gives (the key makes any other shape a bug, but a bug must not misread).
func (st *store) entryBlock(e *cache.Entry, g int, kept int64) (block, bool) {
	ts := e.Tensors()
	if e.Rows() != kept || len(ts) != 1 || int64(len(ts[0])) != kept*int64(st.anon.layout.stride) {
		return block{}, false
	}
	return block{data: ts[0], rows: kept, free: e.Close}, true
}

// decodeTask fills task t's block of its window: the worker's whole job. The transforms
// write every tensor straight into the block's records (a cache entry's, when the cache
// takes it).
func (s *server) decodeTask(ctx context.Context, readers *readers, t task) error {
	rg := s.src.ds.RowGroups[t.rg]
	kept := s.blocks.rows[t.rg]
	blk, hit, err := s.store.rowGroup(t.rg, kept, func(dst []byte) error {
		r, err := readers.get(rg.File)
		if err != nil {
			return err
		}
		return s.stats.decodeCPU(func() error {
			return s.src.decode(ctx, readers.pages, r, rg, kept, dst, &s.blocks.layout)
		})
	})
	if hit {
		s.stats.cached(kept)
	} else {
		s.stats.decoded(kept)
	}
	t.w.blocks[t.block] = blk
	return err
}
