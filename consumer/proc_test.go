package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/synthetic"
)

// The test binary re-executes itself (testkit.Spawn) to play a producer or a consumer in
// a separate process, so every test here crosses a real process boundary through real
// shared memory.
func TestMain(m *testing.M) {
	switch role, cfg := testkit.Role(); role {
	case "producer":
		var c synthetic.Config
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
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
		holdAndWait(cfg)
	}
	os.Exit(m.Run())
}

// holdAndWait attaches to the ring named in the config, takes two batches, reports their
// seqs and then sleeps while holding them, until killed.
func holdAndWait(cfg string) {
	var a struct{ Dir, Job string }
	json.Unmarshal([]byte(cfg), &a)
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

func producerConfig(dir, job string) synthetic.Config {
	return synthetic.Config{Dir: dir, Job: job, Ranks: 1, Depth: 8, Rows: 4, RowBytes: 64,
		Batches: 100, Epochs: 1, Seed: 7, DrainTimeout: 20 * time.Second}
}

var jobSeq atomic.Int32

// jobName is unique per test run and call.
func jobName() string { return fmt.Sprintf("t%d-%d", os.Getpid(), jobSeq.Add(1)) }
