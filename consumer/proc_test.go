package consumer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shmloader/shmloader/producer/synthetic"
)

// The test binary re-executes itself to play a producer or a consumer in a separate
// process, so every test here crosses a real process boundary through real shared memory.
const roleEnv, cfgEnv = "SHMLOADER_TEST_ROLE", "SHMLOADER_TEST_CFG"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "producer":
		var c synthetic.Config
		if err := json.Unmarshal([]byte(os.Getenv(cfgEnv)), &c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		c.Log = os.Stderr
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		res, err := synthetic.Run(ctx, c)
		stop()
		for _, r := range res {
			fmt.Println(r)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "producer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "holder":
		holdAndWait()
	}
	os.Exit(m.Run())
}

// holdAndWait attaches to the ring named in the config, takes two batches, reports their
// seqs and then sleeps while holding them, until killed.
func holdAndWait() {
	var a struct{ Dir, Job string }
	json.Unmarshal([]byte(os.Getenv(cfgEnv)), &a)
	c, err := Attach(a.Job, 0, Options{Dir: a.Dir, Timeout: 10 * time.Second})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for range 2 {
		b, err := c.Next(10 * time.Second)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("held", b.Seq)
	}
	time.Sleep(time.Hour)
}

// shmDir is a private segment directory on the real /dev/shm tmpfs.
func shmDir(t testing.TB) string {
	d, err := os.MkdirTemp("/dev/shm", "shmloader-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type proc struct {
	cmd   *exec.Cmd
	lines chan string
}

// spawn runs this test binary in role with cfg as JSON; its stdout lines arrive on lines.
func spawn(t testing.TB, role string, cfg any) *proc {
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
	p := &proc{cmd: cmd, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { p.kill(); p.cmd.Wait() })
	return p
}

func (p *proc) kill() { p.cmd.Process.Signal(syscall.SIGKILL) }

// line waits for the next stdout line that starts with prefix.
func (p *proc) line(t testing.TB, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("process exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-deadline:
			t.Fatalf("no %q line within %v", prefix, timeout)
		}
	}
}

func producerConfig(dir, job string) synthetic.Config {
	return synthetic.Config{Dir: dir, Job: job, Ranks: 1, Depth: 8, Rows: 4, RowBytes: 64,
		Batches: 100, Epochs: 1, Seed: 7, DrainTimeout: 20 * time.Second}
}

var jobSeq atomic.Int32

// jobName is unique per test run and call.
func jobName() string { return fmt.Sprintf("t%d-%d", os.Getpid(), jobSeq.Add(1)) }
