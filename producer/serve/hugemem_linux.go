package serve

import "golang.org/x/sys/unix"

// bufferSet maps one window's buffers as a single anonymous region and asks for
// transparent huge pages on it: the gathers read rows of a window at random, and with
// 4 KiB pages nearly every row is a TLB miss (windows are tens of MB). The kernel
// gives huge pages only where it can; the buffers work either way.
func bufferSet(sizes []int64) ([][]byte, []byte, error) {
	var total int64
	for _, n := range sizes {
		total += (n + 63) &^ 63
	}
	mem, err := unix.Mmap(-1, 0, int(max(total, 1)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	unix.Madvise(mem, unix.MADV_HUGEPAGE)
	bufs := make([][]byte, len(sizes))
	var off int64
	for i, n := range sizes {
		bufs[i] = mem[off : off+n : off+n]
		off += (n + 63) &^ 63
	}
	return bufs, mem, nil
}

func freeBufferSet(mem []byte) { unix.Munmap(mem) }
