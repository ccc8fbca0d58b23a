package testkit

import (
	"context"
	"sync"

	"github.com/shmloader/shmloader/producer/storage"
)

// CountingStore is storage.Local with every read recorded: which object, where, how many
// bytes.
type CountingStore struct {
	storage.Local
	mu    sync.Mutex
	reads []Read
}

// Read is one ReadAt through a CountingStore.
type Read struct {
	Path   string
	Off, N int64
}

// Open implements storage.Store.
func (s *CountingStore) Open(ctx context.Context, o storage.Object) (storage.Reader, error) {
	r, err := s.Local.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &countingReader{Reader: r, s: s, path: o.Path}, nil
}

// Reads is every read so far, in order.
func (s *CountingStore) Reads() []Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Read(nil), s.reads...)
}

type countingReader struct {
	storage.Reader
	s    *CountingStore
	path string
}

func (r *countingReader) ReadAt(ctx context.Context, p []byte, off int64) error {
	r.s.mu.Lock()
	r.s.reads = append(r.s.reads, Read{r.path, off, int64(len(p))})
	r.s.mu.Unlock()
	return r.Reader.ReadAt(ctx, p, off)
}
