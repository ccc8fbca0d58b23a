package testkit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The role and its config travel to the child in these variables.
const roleEnv, cfgEnv = "SHMLOADER_TEST_ROLE", "SHMLOADER_TEST_CFG"

// Role is the role this test binary was started in by Command or Spawn, and the role's
// config; role is "" when the binary runs as the tests. A package that plays roles asks
// first thing in its TestMain:
//
//	func TestMain(m *testing.M) {
//		if role, cfg := testkit.Role(); role != "" {
//			runRole(role, cfg)
//			os.Exit(0)
//		}
//		os.Exit(m.Run())
//	}
func Role() (role, cfg string) { return os.Getenv(roleEnv), os.Getenv(cfgEnv) }

// Command is this test binary to run again with args, in role with cfg (a string as it
// is, anything else as JSON), which the child's Role returns. ctx kills it as
// exec.CommandContext does.
func Command(ctx context.Context, role string, cfg any, args ...string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	s, ok := cfg.(string)
	if !ok {
		b, err := json.Marshal(cfg)
		if err != nil {
			panic(err)
		}
		s = string(b)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), roleEnv+"="+role, cfgEnv+"="+s)
	return cmd
}

// Proc is a child process that Spawn started.
type Proc struct {
	Cmd   *exec.Cmd
	lines chan string
	wait  sync.Once
}

// Spawn starts this test binary in role with cfg (see Command), running none of its
// tests. Its stderr is the test's; its stdout lines come to Line. The test's end kills
// it.
func Spawn(t testing.TB, role string, cfg any) *Proc {
	t.Helper()
	cmd := Command(context.Background(), role, cfg, "-test.run=^$")
	cmd.Stderr = os.Stderr
	// A pipe of our own rather than StdoutPipe: Wait (in Kill) may run while lines are
	// still being read, and must not close the pipe under the reader.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(p.Kill)
	return p
}

// Kill sends SIGKILL and waits for the process to be gone (reaped); calling it again
// does nothing.
func (p *Proc) Kill() {
	p.wait.Do(func() {
		p.Cmd.Process.Signal(syscall.SIGKILL)
		p.Cmd.Wait()
	})
}

// Line waits up to timeout for the next stdout line that starts with prefix, passing
// over others. A line that starts with "BAD" or "error" (how a role reports that it
// failed) ends the test with that line, and so does the process's exit.
func (p *Proc) Line(t testing.TB, prefix string, timeout time.Duration) string {
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
