package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/producer/plan"
)

// gatherFixture is a window of 4 row groups of 16384 rows in the bench job's layout
// (features [100] float32, 26 + 4 int64 categoricals, label, id: 656-byte records),
// its rows in a random serving order, and one batch's destination tensors.
func gatherFixture(tb testing.TB, mem func(size int) []byte) (*rowLayout, *window, []unsafe.Pointer) {
	l := newRowLayout([]int{400, 208, 32, 8, 8})
	const groups, rows = 4, 16384
	w := &window{starts: make([]int64, groups), blocks: make([]block, groups)}
	for b := range groups {
		data := mem(rows * l.stride)
		for i := range data {
			data[i] = byte(i*7 + b)
		}
		w.blocks[b] = block{data: data, rows: rows}
		w.starts[b] = int64(b * rows)
	}
	w.order = w.locate(plan.Perm(groups*rows, 1))
	dst := make([]unsafe.Pointer, len(l.size))
	for t, sz := range l.size {
		buf := make([]byte, 1024*sz)
		dst[t] = unsafe.Pointer(unsafe.SliceData(buf))
	}
	return &l, w, dst
}

// TestGatherRows checks the gather against a plain per-row reference: every tensor of
// every row of a shuffled window lands in its place.
func TestGatherRows(t *testing.T) {
	l, w, dst := gatherFixture(t, func(n int) []byte { return make([]byte, n) })
	for _, span := range [][2]int64{{0, 1024}, {1000, 2024}, {int64(len(w.order)) - 3, int64(len(w.order))}} {
		gatherRows(l, dst, w, span[0], span[1])
		for i := range span[1] - span[0] {
			o := w.order[span[0]+i]
			rec := w.blocks[o.b].data[int(o.l)*l.stride:]
			for k, sz := range l.size {
				got := unsafe.Slice((*byte)(unsafe.Add(dst[k], int(i)*sz)), sz)
				if want := rec[l.off[k] : l.off[k]+sz]; string(got) != string(want) {
					t.Fatalf("span %v row %d tensor %d: got %x, want %x", span, i, k, got[:8], want[:8])
				}
			}
		}
	}
}

// BenchmarkGather measures the gather of 1024-row batches from a shuffled window, from
// anonymous memory and from a mapped file (as cache entries are), in bytes of tensors,
// and, for scale, a memcpy of the same bytes from consecutive records of the same window
// (the ceiling a gather in serving order cannot reach: its rows are random).
func BenchmarkGather(b *testing.B) {
	dir := b.TempDir()
	files := 0
	for _, src := range []struct {
		name string
		mem  func(int) []byte
	}{
		{"anon", func(n int) []byte { return make([]byte, n) }},
		{"file", func(n int) []byte {
			files++
			path := filepath.Join(dir, fmt.Sprint(files))
			if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
				b.Fatal(err)
			}
			fd, err := unix.Open(path, unix.O_RDWR, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(fd)
			m, err := unix.Mmap(fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { unix.Munmap(m) })
			return m
		}},
	} {
		b.Run(src.name, func(b *testing.B) {
			l, w, dst := gatherFixture(b, src.mem)
			b.SetBytes(int64(1024 * l.stride))
			n := int64(len(w.order))
			from := int64(0)
			for b.Loop() {
				gatherRows(l, dst, w, from, from+1024)
				if from += 1024; from+1024 > n {
					from = 0
				}
			}
		})
	}
	b.Run("memcpy", func(b *testing.B) {
		l, w, _ := gatherFixture(b, func(n int) []byte { return make([]byte, n) })
		size := 1024 * l.stride
		dst := make([]byte, size)
		b.SetBytes(int64(size))
		blk, off := 0, 0
		for b.Loop() {
			copy(dst, w.blocks[blk].data[off:off+size])
			if off += size; off+size > len(w.blocks[blk].data) {
				blk, off = (blk+1)%len(w.blocks), 0
			}
		}
	})
}
