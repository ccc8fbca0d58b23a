package serve

import (
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
