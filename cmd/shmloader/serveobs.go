package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/serve"
)

// observers are what serve offers beside the rings: logs (log/slog, human, text or JSON),
// the metrics endpoint, the status file for `shmloader status`, and the control
// descriptor of a launcher (shmloader.serve in Python).
type observers struct {
	metricsAddr string
	logFormat   string
	logLevel    string
	controlFD   int

	live     atomic.Pointer[serve.Live]
	addr     string // where /metrics listens, "" if off
	stopMets func()
	control  *os.File
	mu       sync.Mutex
	stops    []func()
}

func (o *observers) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics", "127.0.0.1:0", "serve Prometheus metrics at http://ADDR/metrics (port 0: a free one, shown at start and by status; \"off\": none)")
	fs.StringVar(&o.logFormat, "log-format", "human", "logs on stderr as human lines, or slog \"text\" or \"json\" records")
	fs.StringVar(&o.logLevel, "log-level", "info", "least level logged: debug, info, warn or error")
	fs.IntVar(&o.controlFD, "control-fd", -1, "for launchers: a socket descriptor; serve writes one JSON line there once trainers may attach, and stops (as on SIGTERM) when the other end closes")
}

// logger builds the logger the flags ask for, writing to w.
func (o *observers) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, usageErrorf("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch o.logFormat {
	case "human":
		return slog.New(serve.NewHumanHandler(w, level)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageErrorf("--log-format %q: want human, text or json", o.logFormat)
}

// start opens the metrics listener and the control descriptor; stopRun is called when
// the launcher at the other end of the descriptor goes away.
func (o *observers) start(stopRun func()) error {
	addr, stop, err := startMetrics(o.metricsAddr, o.live.Load)
	if err != nil {
		return err
	}
	o.addr, o.stopMets = addr, stop
	if o.controlFD >= 0 {
		f := os.NewFile(uintptr(o.controlFD), "control")
		if f == nil {
			return fmt.Errorf("--control-fd %d: not an open descriptor", o.controlFD)
		}
		o.control = f
		go func() {
			// EOF (the launcher closed its end, or died) or an error: stop like SIGTERM.
			io.Copy(io.Discard, f)
			stopRun()
		}()
	}
	return nil
}

// started runs once the rings exist: the status file, then the launcher's ready line.
func (o *observers) started(l *serve.Live, log *slog.Logger) {
	o.live.Store(l)
	snap := l.Snapshot()
	o.mu.Lock()
	o.stops = append(o.stops, statusWriter(l, snap.Dir, o.addr, time.Second))
	o.mu.Unlock()
	if o.addr != "" {
		log.Info(fmt.Sprintf("metrics at http://%s/metrics", o.addr), "metrics", o.addr)
	}
	if o.control != nil {
		ready, _ := json.Marshal(map[string]any{"ready": true, "job": snap.Job, "dir": snap.Dir,
			"ranks": len(snap.Rings), "pid": snap.PID, "metrics": o.addr})
		w := bufio.NewWriter(o.control)
		w.Write(append(ready, '\n'))
		w.Flush()
	}
}

// stop ends the status file and the metrics endpoint.
func (o *observers) stop() {
	o.mu.Lock()
	stops := o.stops
	o.stops = nil
	o.mu.Unlock()
	for _, s := range stops {
		s()
	}
	if o.stopMets != nil {
		o.stopMets()
	}
}

// fail tells a launcher why serve could not start (it also sees the exit code).
func (o *observers) fail(err error) {
	if o.control == nil || err == nil {
		return
	}
	text := err.Error()
	if hint := dataset.Remedy(err); hint != "" {
		text += "\n" + hint
	}
	msg, _ := json.Marshal(map[string]any{"ready": false, "error": text})
	o.control.Write(append(msg, '\n'))
}
