package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/consumer"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

// runAsync serves cfg in the background; the channel gets Run's error.
func runAsync(t *testing.T, cfg *config.Config) (dir string, done chan error) {
	t.Helper()
	cfg.Job = fmt.Sprintf("life%d", time.Now().UnixNano()%1e9)
	dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	done, finished := make(chan error, 1), make(chan struct{})
	t.Cleanup(func() { cancel(); <-finished }) // before the directory goes
	go func() {
		defer close(finished)
		_, err := Run(ctx, cfg, Options{Dir: dir})
		done <- err
	}()
	return dir, done
}

func attachRank(t *testing.T, cfg *config.Config, dir string, rank int) *consumer.Consumer {
	t.Helper()
	c, err := consumer.Attach(cfg.Job, rank, consumer.Options{Dir: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readN(t *testing.T, c *consumer.Consumer, n int) {
	t.Helper()
	for i := 0; i < n; {
		b, err := c.Next(20 * time.Second)
		if errors.Is(err, consumer.ErrEndOfEpoch) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Release(b)
		i++
	}
}

// wantEnded waits for Run's end and checks it is an Ended of kind, saying every word.
func wantEnded(t *testing.T, done chan error, within time.Duration, kind uint32, words ...string) *Ended {
	t.Helper()
	select {
	case err := <-done:
		var e *Ended
		if !errors.As(err, &e) || e.Kind != kind {
			t.Fatalf("serve ended with %v, want an Ended of kind %d", err, kind)
		}
		for _, w := range words {
			if !strings.Contains(e.Reason, w) {
				t.Fatalf("the reason %q does not say %q", e.Reason, w)
			}
		}
		return e
	case <-time.After(within):
		t.Fatalf("serve still running after %v", within)
	}
	return nil
}

// A trainer's done ends the job once no trainer reads any more: a rank still reading is
// never cut off, and the job ends at once when it detaches (no grace).
func TestDoneEndsTheJobOnceNoTrainerReads(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.Epochs = 2, 0
	dir, done := runAsync(t, cfg)
	c0, c1 := attachRank(t, cfg, dir, 0), attachRank(t, cfg, dir, 1)
	readN(t, c0, 3)
	readN(t, c1, 1)
	if err := c0.Done(); err != nil {
		t.Fatal(err)
	}
	c0.Close()
	readN(t, c1, 20) // rank 1 reads on, well past what its ring held
	select {
	case err := <-done:
		t.Fatalf("serve ended under a trainer still reading: %v", err)
	default:
	}
	c1.Close()
	left := time.Now()
	e := wantEnded(t, done, 5*time.Second, ring.StopDone, "the job is done: rank 0's trainer said so")
	if !e.Clean() {
		t.Fatal("done is a clean end")
	}
	if d := time.Since(left); d > time.Second {
		t.Fatalf("ended %v after the last trainer left: done waits for no grace", d)
	}
}

// A rank no trainer came to does not keep a job alive whose other trainers all left:
// the detach grace ends it, naming the rank (exit 1, not a clean end).
func TestARankNeverAttachedAndTheOthersGoneEndsTheJobAfterTheDetachGrace(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.Epochs, cfg.DetachGrace = 2, 0, 400*time.Millisecond
	dir, done := runAsync(t, cfg)
	c0 := attachRank(t, cfg, dir, 0)
	readN(t, c0, 2)
	c0.Close()
	e := wantEnded(t, done, 5*time.Second, ring.StopUnattached, "rank 1 never had a trainer", "rank 0 at epoch 0 step 2", "detach_grace")
	if e.Clean() {
		t.Fatal("a rank that never had a trainer is a failure")
	}
}

// Every trainer detached: the job ends after the detach grace, not before, not never.
func TestEveryTrainerGoneEndsTheJobAfterTheGrace(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.Epochs, cfg.DetachGrace = 2, 0, 400*time.Millisecond
	dir, done := runAsync(t, cfg)
	c0, c1 := attachRank(t, cfg, dir, 0), attachRank(t, cfg, dir, 1)
	readN(t, c0, 2)
	readN(t, c1, 2)
	c0.Close()
	time.Sleep(600 * time.Millisecond) // rank 1's trainer is still on: no end
	select {
	case err := <-done:
		t.Fatalf("serve ended with a trainer attached: %v", err)
	default:
	}
	c1.Close()
	left := time.Now()
	wantEnded(t, done, 5*time.Second, ring.StopIdle, "every trainer detached", "rank 0 at epoch 0 step 2", "detach_grace")
	if d := time.Since(left); d < 400*time.Millisecond {
		t.Fatalf("ended %v after the last trainer left, before the grace", d)
	}
}

// A rank no trainer came to ends the job after the start grace, naming it.
func TestARankNeverAttachedEndsTheJobAfterTheStartGrace(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.Epochs, cfg.StartGrace = 3, 0, 500*time.Millisecond
	dir, done := runAsync(t, cfg)
	c0 := attachRank(t, cfg, dir, 0)
	readN(t, c0, 1)
	e := wantEnded(t, done, 10*time.Second, ring.StopUnattached, "ranks 1 and 2 never had a trainer", "start_grace")
	if e.Clean() {
		t.Fatal("ranks that never had a trainer are a failure")
	}
}

// With both graces off, serve waits for ever: here, longer than either default test grace.
func TestGracesOffWaitForEver(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.Epochs, cfg.DetachGrace, cfg.StartGrace = 2, 0, 0, 0
	dir, done := runAsync(t, cfg)
	c0 := attachRank(t, cfg, dir, 0)
	readN(t, c0, 1)
	c0.Close()
	select {
	case err := <-done:
		t.Fatalf("serve ended with its graces off: %v", err)
	case <-time.After(time.Second):
	}
}

// A rank whose trainer said done but still holds its lock (views of its batches alive)
// reads no more: it holds no other rank back, and the job ends once the others leave.
func TestADoneRankHoldsNoOtherBack(t *testing.T) {
	cfg := testConfig(t)
	cfg.Ranks, cfg.Epochs = 2, 0
	dir, done := runAsync(t, cfg)
	c0, c1 := attachRank(t, cfg, dir, 0), attachRank(t, cfg, dir, 1)
	readN(t, c0, 1)
	if err := c0.Done(); err != nil {
		t.Fatal(err)
	}
	steps := int(testPlan(t, cfg).Steps(1))
	readN(t, c1, 4*steps) // four epochs past rank 0, which would hold every window
	c1.Close()
	wantEnded(t, done, 5*time.Second, ring.StopDone, "rank 0's trainer said so")
}
