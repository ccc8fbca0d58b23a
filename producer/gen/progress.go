package gen

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmloader/shmloader/internal/units"
)

// progress counts rows and bytes written by all files and prints them once a second.
type progress struct {
	rows  atomic.Int64 // written by file writers, read by the printer
	bytes atomic.Int64 // likewise
	done  chan struct{}
	wg    sync.WaitGroup
}

func startProgress(w io.Writer, total int64, start time.Time) *progress {
	p := &progress{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				rows, secs := p.rows.Load(), time.Since(start).Seconds()
				fmt.Fprintf(w, "gen: %d/%d rows (%.0f%%), %s, %.0f rows/s\n",
					rows, total, 100*float64(rows)/float64(total), units.Bytes(p.bytes.Load()), float64(rows)/secs)
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}

// countingWriter adds the bytes written through it to a progress counter.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}
