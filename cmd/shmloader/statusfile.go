package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/shmloader/shmloader/producer/serve"
	"github.com/shmloader/shmloader/shm"
)

// The status file: what serve tells observers that the ring headers do not hold (cache,
// decode, its metrics address). serve rewrites it about once a second, atomically
// (a temporary file renamed over it), and removes it when it ends; ring/PROTOCOL.md
// "Files" names it. A reader refuses any other format.
const statusFormat = 1

const maxStatusBytes = 1 << 20

type statusFile struct {
	Format   int            `json:"format"`
	Metrics  string         `json:"metrics"` // host:port of /metrics, "" if off
	Snapshot serve.Snapshot `json:"snapshot"`
}

// statusWriter rewrites the status file of a running serve every period until stop.
func statusWriter(live *serve.Live, dir, metrics string, period time.Duration) (stop func()) {
	path := shm.StatusPath(dir, os.Getuid(), live.Snapshot().Job)
	done, finished := make(chan struct{}), make(chan struct{})
	write := func() {
		// A failure to write it costs observers their cache and decode figures only.
		_ = writeStatus(path, statusFile{Format: statusFormat, Metrics: metrics, Snapshot: live.Snapshot()})
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			write()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		// Only our own: a new serve of the job may have replaced it meanwhile.
		if st, err := readStatus(dir, live.Snapshot().Job); err == nil && st.Snapshot.PID == os.Getpid() {
			os.Remove(path)
		}
	}
}

func writeStatus(path string, st statusFile) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// A hidden name of the job's (".shmloader-<uid>-<job>.status.*"): `clean` removes one
	// a killed serve left half written.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// readStatus reads and checks a job's status file: a regular file of this user, at most
// 1 MiB, of this format.
func readStatus(dir, job string) (*statusFile, error) {
	path := shm.StatusPath(dir, os.Getuid(), job)
	f, err := os.OpenFile(path, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fileUID(fi) != os.Getuid() {
		return nil, fmt.Errorf("%s: not a regular file of this user", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStatusBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStatusBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxStatusBytes)
	}
	var st statusFile
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.Format != statusFormat {
		return nil, fmt.Errorf("%s: status format %d, this shmloader reads format %d (a serve of another version)", path, st.Format, statusFormat)
	}
	if st.Snapshot.Job != job {
		return nil, errors.New(path + ": names another job")
	}
	return &st, nil
}
