package serve

import (
	"context"
	"sync"

	"github.com/shmloader/shmloader/producer/colsrc"
	"github.com/shmloader/shmloader/producer/dataset"
)

// task is one row group of a window to decode.
type task struct {
	w     *window
	block int // index in the window
	rg    int // global row-group index
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

// worker decodes tasks until the queue stops.
func (s *server) worker(ctx context.Context) {
	st := s.workers.add()
	readers := newReaders(s.src.ds)
	readers.pages = s.src.cols.NewWorker()
	defer readers.close()
	for {
		t, ok := s.queue.pop()
		if !ok {
			return
		}
		st.begin(t)
		err := s.decodeTask(ctx, readers, t)
		st.end()
		t.w.done(err)
	}
}

// readers keeps a few files open for one goroutine: row groups of one window often
// share a file, and the next window's often do too.
type readers struct {
	pages *colsrc.Worker // the goroutine's page decoders and buffers
	ds    *dataset.Dataset
	open  map[*dataset.File]*dataset.Reader
	order []*dataset.File // oldest first
}

func newReaders(ds *dataset.Dataset) *readers {
	return &readers{ds: ds, open: map[*dataset.File]*dataset.Reader{}}
}

func (rs *readers) get(f *dataset.File) (*dataset.Reader, error) {
	if r := rs.open[f]; r != nil {
		return r, nil
	}
	r, err := rs.ds.OpenReader(f)
	if err != nil {
		return nil, err
	}
	if len(rs.order) == 4 {
		rs.open[rs.order[0]].Close()
		delete(rs.open, rs.order[0])
		rs.order = rs.order[1:]
	}
	rs.open[f] = r
	rs.order = append(rs.order, f)
	return r, nil
}

func (rs *readers) close() {
	for _, r := range rs.open {
		r.Close()
	}
}
