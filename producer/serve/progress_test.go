package serve

import (
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The status line reports the rates and, per ring, the position, occupancy and wait.
func TestStatusLine(t *testing.T) {
	cfg := testConfig(t)
	cfg.Progress = 20 * time.Millisecond
	cfg.Workers = 1 // slow enough for several lines
	var log lockedBuffer
	serveAndRead(t, cfg, Options{Log: &log}, nil)
	line := regexp.MustCompile(`(?m)^serve: \d+ rows/s [\d.]+ MB/s decode \d+ rows/s` +
		`( \| r\d (done|e\d+ \d+/\d+ ring \d+/4 (wait \d+%|no trainer))){2}$`)
	if !line.MatchString(log.String()) {
		t.Fatalf("no status line in:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "rows dropped (drop_last)") {
		t.Fatalf("no start-up summary in:\n%s", log.String())
	}
}

// The status line is a structured record too: a JSON handler gets its figures as
// attributes, and warnings at warning level.
func TestStructuredLogs(t *testing.T) {
	cfg := testConfig(t)
	cfg.Progress = 20 * time.Millisecond
	cfg.Workers = 1
	var buf lockedBuffer
	serveAndRead(t, cfg, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}, nil)
	var status, summary int
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON record: %q: %v", line, err)
		}
		if _, ok := rec["rows_per_s"].(float64); ok {
			status++
		}
		if strings.Contains(rec["msg"].(string), "rows dropped (drop_last)") {
			summary++
		}
	}
	if status == 0 || summary != 1 {
		t.Fatalf("%d status records with rows_per_s, %d summaries in:\n%s", status, summary, buf.String())
	}
}

// Live snapshots count what was served, read, waited for and decoded.
func TestLiveSnapshot(t *testing.T) {
	cfg := testConfig(t)
	var live *Live
	var mu sync.Mutex
	serveAndRead(t, cfg, Options{Started: func(l *Live) { mu.Lock(); live = l; mu.Unlock() }}, nil)
	mu.Lock()
	defer mu.Unlock()
	if live == nil {
		t.Fatal("Started was not called")
	}
	snap := live.Snapshot()
	if snap.Job != cfg.Job || len(snap.Rings) != cfg.Ranks || snap.DecodedRows == 0 || snap.DecodeCPUSeconds <= 0 {
		t.Fatalf("snapshot %+v", snap)
	}
	for _, r := range snap.Rings {
		if r.RowsOut == 0 || r.RowsIn != r.RowsOut || !r.Done || r.StepsPerEpoch == 0 || r.Occupancy != 0 {
			t.Fatalf("ring %+v", r)
		}
		if r.Epoch != snap.Epochs-1 || r.Step != r.StepsPerEpoch {
			t.Fatalf("ring %d: the trainer's last position is (%d, %d), want (%d, %d)", r.Rank, r.Epoch, r.Step, snap.Epochs-1, r.StepsPerEpoch)
		}
	}
}
