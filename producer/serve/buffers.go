package serve

import "sync"

// block is one row group's transformed kept rows: rows records of layout.stride bytes
// (see rowLayout).
type block struct {
	data []byte
	rows int64
	free func() // gives the memory back
}

func (b *block) release() {
	if b.free != nil {
		b.free()
	}
	*b = block{}
}

// blockSource hands out the memory row groups are decoded into: anonymous buffers, all
// sized for the largest row group so that any can be reused for any other.
type blockSource struct {
	layout  rowLayout
	rows    []int64 // kept rows per row group
	maxRows int64

	mu    sync.Mutex
	spare [][]byte
	maps  [][]byte // every buffer's mapping, unmapped by close
}

func newBlockSource(layout rowLayout, rows []int64) *blockSource {
	s := &blockSource{layout: layout, rows: rows}
	for _, n := range rows {
		s.maxRows = max(s.maxRows, n)
	}
	return s
}

// alloc returns an anonymous block for row group g.
func (s *blockSource) alloc(g int) block {
	buf := s.take()
	n := s.rows[g]
	return block{data: buf[:n*int64(s.layout.stride)], rows: n, free: func() { s.put(buf) }}
}

func (s *blockSource) take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.spare); n > 0 {
		buf := s.spare[n-1]
		s.spare = s.spare[:n-1]
		return buf
	}
	size := s.maxRows * int64(s.layout.stride)
	bufs, mem, err := bufferSet([]int64{size})
	if err != nil { // out of address space or memory: the Go heap may still have it
		return make([]byte, size)
	}
	s.maps = append(s.maps, mem)
	return bufs[0]
}

func (s *blockSource) put(buf []byte) {
	s.mu.Lock()
	s.spare = append(s.spare, buf)
	s.mu.Unlock()
}

// close unmaps every buffer; no block may be used afterwards.
func (s *blockSource) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.maps {
		freeBufferSet(m)
	}
	s.maps, s.spare = nil, nil
}
