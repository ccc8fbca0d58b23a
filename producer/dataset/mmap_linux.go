package dataset

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapped is a file mapped read-only for ReadChunks: column chunks are read in place,
// with no copy out of the page cache (a read of every chunk was a tenth of serve's
// CPU). The pages a row group touched are dropped from the mapping (not from the page
// cache) by Release, so the process's memory does not grow with the file. A file cut
// short while mapped faults on access: readers of the bytes run with
// debug.SetPanicOnFault and turn that into an error (see package serve).
type mapped struct {
	mem  []byte
	err  error    // mapping failed: ReadChunks reads instead
	done bool     // tried
	hot  [][2]int // spans handed out since the last Release
}

// get maps f whole (once); nil when it cannot be mapped.
func (m *mapped) get(f *os.File, size int64) []byte {
	if !m.done {
		m.done = true
		if size > 0 && size == int64(int(size)) {
			m.mem, m.err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
		}
	}
	return m.mem
}

// use notes that [start, start+n) of the mapping was handed out, and asks the kernel to
// read it ahead.
func (m *mapped) use(start, n int64) {
	lo, hi := pageDown(start), min(int64(len(m.mem)), start+n)
	unix.Madvise(m.mem[lo:hi], unix.MADV_WILLNEED)
	m.hot = append(m.hot, [2]int{int(lo), int(hi)})
}

// release drops the handed-out spans' pages from the mapping.
func (m *mapped) release() {
	for _, s := range m.hot {
		unix.Madvise(m.mem[s[0]:s[1]], unix.MADV_DONTNEED)
	}
	m.hot = m.hot[:0]
}

func (m *mapped) unmap() {
	if m.mem != nil {
		unix.Munmap(m.mem)
		m.mem = nil
	}
}

func pageDown(off int64) int64 { return off &^ int64(os.Getpagesize()-1) }
