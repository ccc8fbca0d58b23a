package dataset

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/shmloader/shmloader/producer/storage"
)

// countingStore is storage.Local with every read recorded: which object, where, how many
// bytes.
type countingStore struct {
	storage.Local
	mu    sync.Mutex
	reads []readAt
}

type readAt struct {
	path   string
	off, n int64
}

func (s *countingStore) Open(ctx context.Context, o storage.Object) (storage.Reader, error) {
	r, err := s.Local.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &countingReader{Reader: r, s: s, path: o.Path}, nil
}

func (s *countingStore) log() []readAt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]readAt(nil), s.reads...)
}

type countingReader struct {
	storage.Reader
	s    *countingStore
	path string
}

func (r *countingReader) ReadAt(ctx context.Context, p []byte, off int64) error {
	r.s.mu.Lock()
	r.s.reads = append(r.s.reads, readAt{r.path, off, int64(len(p))})
	r.s.mu.Unlock()
	return r.Reader.ReadAt(ctx, p, off)
}

// OpenReader uses the footer Open parsed: reading row groups reads no byte of the footer
// again.
func TestReaderReusesFooter(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 200, writeOpts{rgRows: 100, checksums: true})
	st := &countingStore{}
	d, err := OpenStore(context.Background(), st, path)
	if err != nil {
		t.Fatal(err)
	}
	opened := len(st.log())
	groups := readAll(t, d, []string{"a", "l"})
	checkValues(t, []string{"a", "l"}, groups[1], 100)
	release(groups)
	footerAt := d.Files[0].Size - 8 - d.Files[0].footerLen
	for _, r := range st.log()[opened:] {
		if r.off+r.n > footerAt {
			t.Errorf("a row group read reads the footer again: %d bytes at %d (footer at %d)", r.n, r.off, footerAt)
		}
	}
}

// A file rewritten after Open listed it is refused by name when a Reader opens it, even
// with its size unchanged: never bytes of another version under the first one's identity.
func TestRewrittenFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 200, writeOpts{rgRows: 100, checksums: true})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = d.OpenReader(d.Files[0])
	var de *Error
	if !errors.Is(err, ErrChanged) || !errors.As(err, &de) || de.Path != path {
		t.Fatalf("want ErrChanged naming %s, got %v", path, err)
	}
}
