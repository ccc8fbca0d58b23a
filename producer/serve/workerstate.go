package serve

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// What each decode worker is doing, for stall notes: the row group it decodes, since
// when, and the OS thread it began on (whose state and CPU time /proc tells, so that a
// note can say whether a slow row group waits for storage or for the CPU). Workers are
// not locked to their threads: a locked goroutine costs a thread hand-off at every wait,
// and a goroutine blocked in a read stays on its thread anyway.

type workerState struct {
	mu    sync.Mutex
	tid   int // the OS thread the task began on: a goroutine in a read stays on it
	busy  bool
	key   windowKey
	rg    int
	since time.Time
}

type workerStates struct {
	mu  sync.Mutex
	all []*workerState
}

func (ws *workerStates) add() *workerState {
	w := &workerState{}
	ws.mu.Lock()
	ws.all = append(ws.all, w)
	ws.mu.Unlock()
	return w
}

func (w *workerState) begin(t task) {
	tid := unix.Gettid()
	w.mu.Lock()
	w.busy, w.key, w.rg, w.since, w.tid = true, t.w.key, t.rg, time.Now(), tid
	w.mu.Unlock()
}

func (w *workerState) end() {
	w.mu.Lock()
	w.busy = false
	w.mu.Unlock()
}

func (ws *workerStates) count() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.all)
}

// busyWorker is a worker on a row group of some window.
type busyWorker struct {
	tid   int
	rg    int
	since time.Time
}

// on lists the workers decoding row groups of window key now.
func (ws *workerStates) on(key windowKey) []busyWorker {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []busyWorker
	for _, w := range ws.all {
		w.mu.Lock()
		if w.busy && w.key == key {
			out = append(out, busyWorker{tid: w.tid, rg: w.rg, since: w.since})
		}
		w.mu.Unlock()
	}
	return out
}

// threads are the OS threads of the workers' current tasks.
func (ws *workerStates) threads() []int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []int
	for _, w := range ws.all {
		w.mu.Lock()
		if w.busy {
			out = append(out, w.tid)
		}
		w.mu.Unlock()
	}
	return out
}

// cpuSample is a thread's state and CPU time at one moment.
type cpuSample struct {
	at      time.Time
	ticks   uint64 // user + system clock ticks
	state   byte   // R running, S sleeping, D waiting for I/O ...
	share   float64
	hasPrev bool
}

// sampleCPU reads each thread's /proc stat and keeps its CPU share since the last round.
func (ex *explainer) sampleCPU(tids []int, now time.Time) {
	for _, tid := range tids {
		state, ticks, err := threadStat(tid)
		if err != nil {
			delete(ex.cpu, tid)
			continue
		}
		prev, ok := ex.cpu[tid]
		cur := cpuSample{at: now, ticks: ticks, state: state}
		if ok && now.After(prev.at) {
			cur.share = float64(ticks-prev.ticks) * 10 * float64(time.Millisecond) / float64(now.Sub(prev.at))
			cur.hasPrev = true
		}
		ex.cpu[tid] = cur
	}
}

// ioBound: the thread is in uninterruptible (I/O) sleep, or used under a quarter of a
// core over the last round.
func (ex *explainer) ioBound(tid int) bool {
	c, ok := ex.cpu[tid]
	return ok && (c.state == 'D' || (c.hasPrev && c.share < 0.25))
}

// threadStat reads state and utime+stime (clock ticks, 100 a second on Linux) of one of
// this process's threads.
func threadStat(tid int) (state byte, ticks uint64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return 0, 0, err
	}
	// "tid (comm) S ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/self/task/%d/stat: no ')'", tid)
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/self/task/%d/stat: %d fields", tid, len(f))
	}
	// f[0] is the state (field 3); utime and stime are fields 14 and 15.
	utime, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil || len(f[0]) != 1 {
		return 0, 0, fmt.Errorf("/proc/self/task/%d/stat: malformed", tid)
	}
	return f[0][0], utime + stime, nil
}
