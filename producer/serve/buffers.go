package serve

import "github.com/shmloader/shmloader/producer/plan"

// start registers a new window with buffers. c.mu is held.
func (c *cache) start(pw plan.Window, key windowKey) *window {
	w := &window{key: key, plan: pw, ready: make(chan struct{}), pending: len(pw.RowGroups), onReady: c.wake}
	if n := len(c.spare); n > 0 {
		w.bufs, c.spare = c.spare[n-1], c.spare[:n-1]
	} else {
		sizes := make([]int64, len(c.src.rowSize))
		for t, sz := range c.src.rowSize {
			sizes[t] = c.bufRows * int64(sz)
		}
		bufs, mem, err := bufferSet(sizes)
		if err != nil { // out of address space or memory: the Go heap may still have it
			bufs = make([][]byte, len(sizes))
			for t, n := range sizes {
				bufs[t] = make([]byte, n)
			}
		} else {
			c.maps = append(c.maps, mem)
		}
		w.bufs = bufs
	}
	c.entries[key] = w
	return w
}

// close unmaps every buffer set; nothing may use the cache afterwards.
func (c *cache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.maps {
		freeBufferSet(m)
	}
	c.maps, c.spare, c.entries = nil, nil, nil
}
