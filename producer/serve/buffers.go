package serve

import "sync"

// block is one row group's transformed kept rows: tensors[t] holds rows × rowSize[t]
// bytes, row-major.
type block struct {
	tensors [][]byte
	rows    int64
	free    func() // gives the memory back
}

func (b *block) release() {
	if b.free != nil {
		b.free()
	}
	*b = block{}
}

// blockSource hands out the memory row groups are decoded into: anonymous buffer sets,
// all sized for the largest row group so that any can be reused for any other.
type blockSource struct {
	rowSize []int   // bytes per row of each tensor
	rows    []int64 // kept rows per row group
	maxRows int64

	mu    sync.Mutex
	spare [][][]byte
	maps  [][]byte // every buffer set's mapping, unmapped by close
}

func newBlockSource(rowSize []int, rows []int64) *blockSource {
	s := &blockSource{rowSize: rowSize, rows: rows}
	for _, n := range rows {
		s.maxRows = max(s.maxRows, n)
	}
	return s
}

// alloc returns an anonymous block for row group g.
func (s *blockSource) alloc(g int) block {
	bufs := s.take()
	n := s.rows[g]
	tensors := make([][]byte, len(bufs))
	for t, b := range bufs {
		tensors[t] = b[:n*int64(s.rowSize[t])]
	}
	return block{tensors: tensors, rows: n, free: func() { s.put(bufs) }}
}

func (s *blockSource) take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.spare); n > 0 {
		bufs := s.spare[n-1]
		s.spare = s.spare[:n-1]
		return bufs
	}
	sizes := make([]int64, len(s.rowSize))
	for t, sz := range s.rowSize {
		sizes[t] = s.maxRows * int64(sz)
	}
	bufs, mem, err := bufferSet(sizes)
	if err != nil { // out of address space or memory: the Go heap may still have it
		bufs = make([][]byte, len(sizes))
		for t, n := range sizes {
			bufs[t] = make([]byte, n)
		}
	} else {
		s.maps = append(s.maps, mem)
	}
	return bufs
}

func (s *blockSource) put(bufs [][]byte) {
	s.mu.Lock()
	s.spare = append(s.spare, bufs)
	s.mu.Unlock()
}

// close unmaps every buffer set; no block may be used afterwards.
func (s *blockSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.maps {
		freeBufferSet(m)
	}
	s.maps, s.spare = nil, nil
}
