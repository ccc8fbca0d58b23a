package dataset

import (
	"container/list"
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/shmloader/shmloader/producer/storage"
)

// A parsed footer takes about 600 bytes per column chunk (row groups × columns): a
// dataset of a million row groups of 100 columns would keep 60 GB of them for the whole
// run, while a run reads a few files at a time. So a Dataset keeps its files' parsed
// footers only within a budget, least recently used first out. Open parses each footer
// once, to check it and learn the schema and row groups; File.Footer afterwards returns
// the kept one, or reads and parses it again, after checking that the file is the one
// Open read (size, times and the footer's hash): a file changed since is an error, never
// other rows.

// FooterBudget is what a Dataset's kept footers may take, estimated from their size as
// stored (parsedPerStoredByte). 16 MiB holds the demo's 8 files' footers many times over;
// serving 80 such files (10 million rows) under it, which reads most footers again, cost
// no more CPU than keeping them all (17.2 against 16.9-17.5 CPU-s a run) and 80 MiB less
// peak RSS.
const FooterBudget = 16 << 20

// footerBudget is the budget Open gives a Dataset; tests lower it.
var footerBudget int64 = FooterBudget

// parsedPerStoredByte is what arrow-go's parsed footer takes per byte of the footer as
// stored, measured on `shmloader gen` files (134 columns): 11.8 MB of footers took 75 MB
// of heap once parsed.
const parsedPerStoredByte = 7

// footer is what a file's footer gives once parsed: arrow-go's metadata and the chunk
// CRCs of ChecksumKey (nil when absent).
type footer struct {
	meta *metadata.FileMetaData
	sums []uint32
}

type footerCache struct {
	store  storage.Store // where footers are read again
	mu     sync.Mutex
	budget int64
	used   int64
	lru    list.List // *File, most recently used at the front
}

func newFooterCache(st storage.Store, budget int64) *footerCache {
	return &footerCache{store: st, budget: budget}
}

// get returns f's kept footer, or nil.
func (c *footerCache) get(f *File) *footer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.elem != nil {
		c.lru.MoveToFront(f.elem)
	}
	return f.ft
}

// put keeps ft as f's footer and drops the least recently used others beyond the
// budget (never the one just put).
func (c *footerCache) put(f *File, ft *footer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.elem == nil {
		f.ft = ft
		f.elem = c.lru.PushFront(f)
		c.used += f.footerCost()
	}
	for c.used > c.budget && c.lru.Len() > 1 {
		old := c.lru.Remove(c.lru.Back()).(*File)
		c.used -= old.footerCost()
		old.ft, old.elem = nil, nil
	}
}

func (f *File) footerCost() int64 { return f.footerLen * parsedPerStoredByte }

// Footer returns the file's parsed footer, reading it again when the dataset did not
// keep it. A Reader keeps the one it opened with.
func (f *File) Footer() (*metadata.FileMetaData, error) {
	ft, err := f.footer()
	if err != nil {
		return nil, err
	}
	return ft.meta, nil
}

func (f *File) footer() (*footer, error) {
	if f.fc == nil { // a File read on its own keeps its footer
		return f.ft, nil
	}
	if ft := f.fc.get(f); ft != nil {
		return ft, nil
	}
	ctx := context.Background()
	o, err := f.fc.store.Stat(ctx, f.Path)
	if err != nil {
		return nil, fromStorage(err)
	}
	again, err := readFile(ctx, f.fc.store, o, f.Index)
	if err != nil {
		return nil, err
	}
	if o.Identity != f.obj.Identity || again.footerHash != f.footerHash {
		return nil, &Error{Op: "read", Path: f.Path, RowGroup: -1,
			Err: kindf(ErrChanged, "the file changed after its footer was first read (size %d, now %d): restart to read it as it is now", f.Size, again.Size)}
	}
	f.fc.put(f, again.ft)
	return again.ft, nil
}
