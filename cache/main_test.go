package cache

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary re-executes itself to play another process on the same dir (roles in
// roles_test.go), so the sharing and crash tests cross real process boundaries.
const roleEnv, cfgEnv = "SHMLOADER_CACHE_TEST_ROLE", "SHMLOADER_CACHE_TEST_CFG"

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		runRole(role, os.Getenv(cfgEnv))
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

type proc struct {
	cmd   *exec.Cmd
	lines chan string
}

// spawn runs this test binary in role with cfg as JSON; its stdout lines arrive on lines.
func spawn(t testing.TB, role string, cfg any) *proc {
	t.Helper()
	b, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"="+role, cfgEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL and reaps the process.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// line waits for the next stdout line that starts with prefix; other lines are returned
// too if they start with "BAD" or "error", which end the test.
func (p *proc) line(t testing.TB, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("process exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, "BAD") || strings.HasPrefix(l, "error") {
				t.Fatalf("child: %s", l)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-deadline:
			t.Fatalf("no %q line within %v", prefix, timeout)
		}
	}
}
