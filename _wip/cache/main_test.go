package cache

import (
	"bufio"
	"crypto/sha256"
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

func key(i int) Key { return sha256.Sum256(fmt.Appendf(nil, "key-%d", i)) }

// keyInShard finds the i-th key (from start) that lands in shard s of n.
func keyInShard(s, n, start int) Key {
	for j := start; ; j++ {
		if k := key(j); k.shard(n) == s {
			return k
		}
	}
}

// pattern is what every test writes into tensor t of key k: readers can check it.
func pattern(k Key, t, j int) byte { return k[(j+t)%len(k)] ^ byte(j*7+t) }

func fill(k Key, ts [][]byte) {
	for t, b := range ts {
		for j := range b {
			b[j] = pattern(k, t, j)
		}
	}
}

// intact reports whether e holds key k's pattern in tensors of the given sizes.
func intact(k Key, e *Entry, sizes []int64) error {
	ts := e.Tensors()
	if len(ts) != len(sizes) {
		return fmt.Errorf("%d tensors, want %d", len(ts), len(sizes))
	}
	for t, b := range ts {
		if int64(len(b)) != sizes[t] {
			return fmt.Errorf("tensor %d of %d bytes, want %d", t, len(b), sizes[t])
		}
		for j := range b {
			if b[j] != pattern(k, t, j) {
				return fmt.Errorf("tensor %d byte %d: %#x, want %#x", t, j, b[j], pattern(k, t, j))
			}
		}
	}
	return nil
}

// put writes and commits key k; the returned entry is closed at the test's end.
func put(t testing.TB, c *Cache, k Key, sizes ...int64) *Entry {
	t.Helper()
	w, err := c.Create(k, Meta{Config: "cfg", Label: "label " + k.String()[:8], Rows: 3}, sizes)
	if err != nil {
		t.Fatal(err)
	}
	fill(k, w.Tensors())
	e, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// mustGet asserts a hit with k's pattern.
func mustGet(t testing.TB, c *Cache, k Key, sizes ...int64) {
	t.Helper()
	e, ok := c.Get(k)
	if !ok {
		t.Fatalf("Get %v: miss, want a hit", k)
	}
	defer e.Close()
	if err := intact(k, e, sizes); err != nil {
		t.Fatalf("Get %v: %v", k, err)
	}
}

func mustMiss(t testing.TB, c *Cache, k Key) {
	t.Helper()
	if e, ok := c.Get(k); ok {
		e.Close()
		t.Fatalf("Get %v: hit, want a miss", k)
	}
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
