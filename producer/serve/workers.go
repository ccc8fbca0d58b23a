package serve

import (
	"context"
	"sync"

	"github.com/shmloader/shmloader/producer/dataset"
)

// task is one row group to decode into a window.
type task struct {
	w     *window
	rg    dataset.RowGroup
	kept  int64
	first int64 // row of the window where its rows go
}

// queue holds decode tasks: tasks a rank waits for go before prefetches.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	urgent  []task
	later   []task
	stopped bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(ts []task, urgent bool) {
	q.mu.Lock()
	if urgent {
		q.urgent = append(q.urgent, ts...)
	} else {
		q.later = append(q.later, ts...)
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

// promote moves w's queued tasks ahead of the prefetches: a rank now waits for it.
func (q *queue) promote(w *window) {
	q.mu.Lock()
	defer q.mu.Unlock()
	keep := q.later[:0]
	for _, t := range q.later {
		if t.w == w {
			q.urgent = append(q.urgent, t)
		} else {
			keep = append(keep, t)
		}
	}
	clear(q.later[len(keep):])
	q.later = keep
}

func (q *queue) pop() (task, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && len(q.urgent) == 0 && len(q.later) == 0 {
		q.cond.Wait()
	}
	if q.stopped {
		return task{}, false
	}
	var t task
	if len(q.urgent) > 0 {
		t, q.urgent = q.urgent[0], q.urgent[1:]
	} else {
		t, q.later = q.later[0], q.later[1:]
	}
	return t, true
}

func (q *queue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// worker decodes tasks until the queue stops. It keeps a few files open: row groups of
// one window often share a file, and the next window's often do too.
func (s *server) worker(ctx context.Context) {
	readers := map[*dataset.File]*dataset.Reader{}
	var order []*dataset.File
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	for {
		t, ok := s.queue.pop()
		if !ok {
			return
		}
		r := readers[t.rg.File]
		var err error
		if r == nil {
			if r, err = s.src.ds.OpenReader(t.rg.File); err == nil {
				if len(order) == 4 {
					readers[order[0]].Close()
					delete(readers, order[0])
					order = order[1:]
				}
				readers[t.rg.File] = r
				order = append(order, t.rg.File)
			}
		}
		if err == nil {
			err = s.src.decode(ctx, r, t.rg, t.kept, t.w.bufs, t.first)
		}
		s.stats.decoded(t.kept)
		t.w.done(err)
	}
}
