package serve

import "golang.org/x/sys/unix"

// bufferSet maps buffers as a single anonymous region. It does not ask for transparent
// huge pages, though the gathers read a block's rows at random and 4 KiB pages make
// nearly every row a TLB miss: on the machine the benchmarks run on, first writes to
// fresh huge pages cost so much system time that a cold epoch was 1.2-1.7x slower with
// MADV_HUGEPAGE (4 pairs of 1-epoch runs of the bench work: 0.54-0.77 against 0.85-0.95
// M rows/s, 0.71-1.05 against 0.34-0.46 s of system time), and 3 epochs were no faster.
func bufferSet(sizes []int64) ([][]byte, []byte, error) {
	var total int64
	for _, n := range sizes {
		total += (n + 63) &^ 63
	}
	mem, err := unix.Mmap(-1, 0, int(max(total, 1)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, err
	}
	bufs := make([][]byte, len(sizes))
	var off int64
	for i, n := range sizes {
		bufs[i] = mem[off : off+n : off+n]
		off += (n + 63) &^ 63
	}
	return bufs, mem, nil
}

func freeBufferSet(mem []byte) { unix.Munmap(mem) }
