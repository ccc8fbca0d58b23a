package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// List finds *.parquet files at any depth in path order, leaving out hidden and "_"
// names, and gives the folder partition columns are named under.
func TestLocalList(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b/k=1/x.parquet", "a.parquet", "_SUCCESS", ".a.parquet.crc", "_tmp/y.parquet", "notes.txt"} {
		writeFile(t, filepath.Join(dir, n), []byte("data"))
	}
	l, err := Local{}.List(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range l.Objects {
		got = append(got, o.Path)
	}
	want := []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b/k=1/x.parquet")}
	if fmt.Sprint(got) != fmt.Sprint(want) || l.Root != dir {
		t.Fatalf("got %v root %q, want %v root %q", got, l.Root, want, dir)
	}
	g, err := Local{}.List(context.Background(), filepath.Join(dir, "b", "*", "*.parquet"))
	if err != nil || len(g.Objects) != 1 || g.Root != filepath.Join(dir, "b") {
		t.Fatalf("glob: %+v %v", g, err)
	}
	if _, err := (Local{}).List(context.Background(), filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing folder: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := (Local{}).List(context.Background(), empty); !errors.Is(err, ErrNoObjects) {
		t.Fatalf("empty folder: %v", err)
	}
}

// A local object's identity is its real path, size, modification and change times, in
// the form cache keys have used since before the storage seam (so caches stay valid).
func TestLocalIdentity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.parquet")
	writeFile(t, path, []byte("0123456789"))
	link := filepath.Join(dir, "link.parquet")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	o, err := Local{}.Stat(context.Background(), link)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	real, _ := filepath.EvalSymlinks(path)
	want := fmt.Sprintf("%s\x00%d\x00%d\x00%d", real, st.Size(), st.ModTime().UnixNano(), st.Sys().(*syscall.Stat_t).Ctim.Nano())
	if o.Identity != want || o.Size != 10 || o.Path != link {
		t.Fatalf("got %q size %d path %s, want %q", o.Identity, o.Size, o.Path, want)
	}
	// Rewritten with the same bytes and its old mtime put back: another identity.
	time.Sleep(10 * time.Millisecond)
	writeFile(t, path, []byte("0123456789"))
	os.Chtimes(path, st.ModTime(), st.ModTime())
	again, _ := Local{}.Stat(context.Background(), path)
	if again.Identity == o.Identity {
		t.Fatal("a rewritten file kept its identity")
	}
	if _, err := (Local{}).Open(context.Background(), o); !errors.Is(err, ErrChanged) {
		t.Fatalf("open of the old version: %v", err)
	}
}

// ReadAt gives all of the range or an error: never a short read, never past the end,
// never after the context is done.
func TestLocalReadAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.parquet")
	writeFile(t, path, []byte("0123456789"))
	o, _ := Local{}.Stat(context.Background(), path)
	r, err := Local{}.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := make([]byte, 4)
	if err := r.ReadAt(context.Background(), p, 6); err != nil || string(p) != "6789" {
		t.Fatalf("%q %v", p, err)
	}
	for _, off := range []int64{7, 11, -1} {
		if err := r.ReadAt(context.Background(), p, off); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read of 4 at %d: %v", off, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.ReadAt(ctx, p, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// For refuses a URL, naming its scheme, and gives Local for a path.
func TestFor(t *testing.T) {
	if _, err := For("s3://bucket/x"); err == nil {
		t.Fatal("s3 URL accepted")
	}
	if st, err := For("data/x"); err != nil || st != (Local{}) {
		t.Fatal(st, err)
	}
}
