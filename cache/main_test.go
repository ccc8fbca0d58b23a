package cache

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/shmloader/shmloader/internal/testkit"
)

// The test binary re-executes itself (testkit.Spawn) to play another process on the same
// dir (roles in roles_test.go), so the sharing and crash tests cross real process
// boundaries.
func TestMain(m *testing.M) {
	if role, cfg := testkit.Role(); role != "" {
		runRole(role, cfg)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// logBuf collects warnings; resetting warned lets each test see its own.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) log(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBuf) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// openCache opens dir with a fresh set of once-only warnings, closed at the test's end.
func openCache(t testing.TB, dir string, size int64, shards int) (*Cache, *logBuf) {
	t.Helper()
	warned.Clear()
	lb := &logBuf{}
	c, err := Open(Options{Dir: dir, Size: size, Shards: shards, Log: lb.log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, lb
}
