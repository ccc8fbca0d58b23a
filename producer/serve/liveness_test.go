package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/consumer"
	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

// Many ranks over one-row-group windows keep the window cache full of windows being
// decoded while every rank waits for room: each finished decode must wake them.
func TestManyRanksSmallWindowsNeverHang(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.BatchSize, cfg.Epochs, cfg.RingDepth = 4, 500, 4, 8
	cfg.Shuffle.Window = 1
	out := serveAndRead(t, cfg, Options{}, nil)
	for r, s := range out {
		if want := 4 * int(testPlan(t, cfg).Steps(0)); len(s.hashes) != want {
			t.Fatalf("rank %d: %d batches, want %d", r, len(s.hashes), want)
		}
	}
}

// A trainer that seeks after it has read the end of the stream (a restart from a
// checkpoint near the end) is served from there, not told the seek went unanswered.
func TestSeekAfterEndOfStream(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks = 1
	full := serveAndRead(t, cfg, Options{}, nil)[0]

	cfg = testConfig(t)
	cfg.Ranks = 1
	cfg.Job = fmt.Sprintf("eos%d", time.Now().UnixNano()%1e9)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, cfg, Options{Dir: dir}); done <- err }()
	c, err := consumer.Attach(cfg.Job, 0, consumer.Options{Dir: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	readAll := func() []string {
		var hs []string
		for {
			b, err := c.Next(20 * time.Second)
			switch {
			case errors.Is(err, consumer.ErrEndOfStream):
				return hs
			case errors.Is(err, consumer.ErrEndOfEpoch):
				continue
			case err != nil:
				t.Fatal(err)
			}
			hs = append(hs, hashOf(b))
			c.Release(b)
		}
	}
	first := readAll()
	if !slices.Equal(first, full.hashes) {
		t.Fatal("the first pass differs from the uninterrupted stream")
	}
	if err := c.Seek(1, 3); err != nil {
		t.Fatal(err)
	}
	again := readAll()
	skip := len(full.ids[0])/cfg.BatchSize + 3
	if !slices.Equal(again, full.hashes[skip:]) {
		t.Fatalf("after a seek past the end: %d batches, want the %d from epoch 1 step 3", len(again), len(full.hashes)-skip)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With --drain-timeout, a rank whose trainer leaves mid-stream, with none attaching
// after it, stops serve with an error naming the rank, instead of waiting for ever.
func TestTrainerLeavesMidStream(t *testing.T) {
	cfg, dir, done := serveWithDrainTimeout(t)
	start := time.Now()
	c, err := consumer.Attach(cfg.Job, 1, consumer.Options{Dir: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := c.Next(20 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Release(b)
	}
	c.Close()
	wantRank1GivenUp(t, <-done, start)
}

// serveWithDrainTimeout serves testConfig with --drain-timeout 1s, rank 0 read until
// serve stops; done gets Run's error.
func serveWithDrainTimeout(t *testing.T) (cfg *config.Config, dir string, done chan error) {
	cfg = testConfig(t)
	cfg.Job = fmt.Sprintf("orph%d", time.Now().UnixNano()%1e9)
	dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	done = make(chan error, 1)
	go func() { _, err := Run(ctx, cfg, Options{Dir: dir, DrainTimeout: time.Second}); done <- err }()
	go read(cfg.Job, 0, dir, [2]uint64{})
	return cfg, dir, done
}

// wantRank1GivenUp checks that serve gave up on rank 1 for its --drain-timeout, soon
// after since.
func wantRank1GivenUp(t *testing.T, err error, since time.Time) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "rank 1") || !strings.Contains(err.Error(), "drain-timeout") {
		t.Fatalf("serve returned %v, want an error naming rank 1 and --drain-timeout", err)
	}
	var e *Ended
	if !errors.As(err, &e) || e.Kind != ring.StopAbandoned || e.Clean() {
		t.Fatalf("serve returned %v, want an Ended of kind abandoned (every trainer is told so), not a clean end", err)
	}
	if d := time.Since(since); d > 15*time.Second {
		t.Fatalf("serve took %v to give up", d)
	}
}

// takeOneRole is the test binary run as a trainer process (testkit.Spawn), with "job rank
// dir" for its config: it attaches, takes one batch, says "took" on stdout and waits to
// be killed.
const takeOneRole = "take-one"

func takeOneAndWait(cfg string) {
	var job, dir string
	var rank int
	if _, err := fmt.Sscan(cfg, &job, &rank, &dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c, err := consumer.Attach(job, rank, consumer.Options{Dir: dir, Timeout: 20 * time.Second})
	if err == nil {
		_, err = c.Next(20 * time.Second)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("took")
	time.Sleep(time.Hour)
	os.Exit(0)
}

// A trainer killed after it took a batch but before it released one has still left its
// rank: --drain-timeout bounds the wait for the next one, as it does after a trainer
// that read for a while. Only its pid in the ring header, which a kill leaves, tells.
func TestTrainerKilledBeforeItsFirstRelease(t *testing.T) {
	cfg, dir, done := serveWithDrainTimeout(t)
	trainer := testkit.Spawn(t, takeOneRole, fmt.Sprintf("%s 1 %s", cfg.Job, dir))
	trainer.Line(t, "took", time.Minute)
	trainer.Kill()
	killed := time.Now()
	wantRank1GivenUp(t, <-done, killed)
}
