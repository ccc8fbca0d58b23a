package serve

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/plan"
)

// A worker thread that waits (here, in a pipe read, as in a slow pread) reads as waiting
// for storage; one that computes reads as decoding.
func TestWorkerThreadsAreToldApartByTheirCPU(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	waitingTid, busyTid := make(chan int, 1), make(chan int, 1)
	var stop atomic.Bool
	go func() { // blocked in a read
		runtime.LockOSThread()
		waitingTid <- unix.Gettid()
		var b [1]byte
		r.Read(b[:])
	}()
	go func() { // busy
		runtime.LockOSThread()
		busyTid <- unix.Gettid()
		x := 0
		for !stop.Load() {
			x++
		}
		_ = x
	}()
	waiting, busy := <-waitingTid, <-busyTid
	defer stop.Store(true)
	ex := &explainer{cpu: map[int]cpuSample{}}
	start := time.Now()
	ex.sampleCPU([]int{waiting, busy}, start)
	time.Sleep(700 * time.Millisecond)
	ex.sampleCPU([]int{waiting, busy}, time.Now())
	if !ex.ioBound(waiting) {
		t.Errorf("a thread blocked in a read is not taken as waiting for storage: %+v", ex.cpu[waiting])
	}
	if ex.ioBound(busy) {
		t.Errorf("a busy thread is taken as waiting for storage: %+v", ex.cpu[busy])
	}
}

// decodeNote names the row group a worker has been on for long, or says decoding is
// behind when the window's row groups wait in the queue.
func TestDecodeNotes(t *testing.T) {
	f := &dataset.File{Path: "data/part-3.parquet"}
	s := &server{src: &source{ds: &dataset.Dataset{RowGroups: []dataset.RowGroup{{File: f, Index: 4}, {File: f, Index: 5}, {File: f, Index: 6}}}}}
	s.windows = newWindows(newQueue(), nil, 4, func(windowKey) (uint64, uint64) { return 0, 0 }, func() uint64 { return 0 })
	key := windowKey{epoch: 1, part: 0, index: 2}
	s.windows.entries[key] = &window{key: key, plan: plan.Window{RowGroups: []int{0, 1, 2}}, pending: 3, ready: make(chan struct{})}
	s.workers.add()
	ex := &explainer{cpu: map[int]cpuSample{}}
	now := time.Now()
	if got := s.decodeNote(ex, key, now); !strings.Contains(got, "its next window's 3 row groups wait in the decode queue: decoding is the slower side (1 worker, all busy)") {
		t.Errorf("queued: %q", got)
	}
	w := s.workers.add()
	w.begin(task{w: s.windows.entries[key], rg: 1})
	w.tid = -2 // no such thread: what the explainer knows of it is set below
	if got := s.decodeNote(ex, key, time.Now()); !strings.Contains(got, "decoding its next window (3 of 3 row groups left, 1 worker on it)") {
		t.Errorf("being decoded: %q", got)
	}
	if got := s.decodeNote(ex, key, time.Now().Add(5*time.Second)); got != "decoding data/part-3.parquet row group 5 for 5 s (3 of its next window's 3 row groups left)" {
		t.Errorf("one row group for long: %q", got)
	}
	ex.cpu[-2] = cpuSample{state: 'D'}
	if got := s.decodeNote(ex, key, time.Now().Add(5*time.Second)); !strings.HasPrefix(got, "reading (waiting for storage) data/part-3.parquet row group 5 for 5 s") {
		t.Errorf("waiting for storage: %q", got)
	}
}
