package consumer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/synthetic"
	"github.com/shmloader/shmloader/shm"
)

func endless(dir, job string, ranks int) synthetic.Config {
	c := producerConfig(dir, job)
	c.Ranks, c.Epochs, c.Interval = ranks, 0, 200*time.Microsecond
	return c
}

func mustAttach(t *testing.T, job string, rank int, dir string) *Consumer {
	t.Helper()
	c, err := Attach(job, rank, Options{Dir: dir, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// read takes n batches, releasing each, and returns the last.
func read(t *testing.T, c *Consumer, n int) *Batch {
	t.Helper()
	var last *Batch
	for i := 0; i < n; {
		b, err := c.Next(5 * time.Second)
		if errors.Is(err, ErrEndOfEpoch) {
			continue
		}
		if err != nil {
			t.Fatalf("rank %d after %d batches: %v", c.Rank, i, err)
		}
		c.Release(b)
		last = b
		i++
	}
	return last
}

func TestProducerKilledIsReportedWithinTwoSeconds(t *testing.T) {
	dir, job := shmDir(t), jobName()
	p := testkit.Spawn(t, "producer", endless(dir, job, 1))
	c := mustAttach(t, job, 0, dir)
	read(t, c, 50)
	p.Kill()
	killed := time.Now()
	for {
		b, err := c.Next(5 * time.Second)
		if err == nil {
			c.Release(b) // published before the kill: still valid
			continue
		}
		if !errors.Is(err, ErrProducerGone) {
			t.Fatalf("want ErrProducerGone, got %v", err)
		}
		break
	}
	if d := time.Since(killed); d > 2*time.Second {
		t.Fatalf("producer death seen after %v, want <= 2s", d)
	}
	if _, err := c.Next(0); !errors.Is(err, ErrProducerGone) {
		t.Fatalf("next after death: %v", err)
	}
}

func TestKilledConsumerLeavesOthersServedAndRingReattachable(t *testing.T) {
	dir, job := shmDir(t), jobName()
	testkit.Spawn(t, "producer", endless(dir, job, 2))
	other := mustAttach(t, job, 1, dir)
	read(t, other, 20)

	h := testkit.Spawn(t, "holder", map[string]string{"Dir": dir, "Job": job})
	first := h.Line(t, "held", 10*time.Second)
	h.Line(t, "held", 10*time.Second)
	h.Kill()

	before := read(t, other, 1).Seq
	after := read(t, other, 200).Seq // the producer keeps serving rank 1
	if after < before+200 {
		t.Fatalf("rank 1 advanced from %d to %d", before, after)
	}
	c := mustAttach(t, job, 0, dir) // the dead holder's claim is gone
	b := read(t, c, 1)
	if want, _ := strconv.Atoi(strings.Fields(first)[1]); b.Seq != uint64(want) {
		t.Fatalf("re-attached consumer starts at seq %d, want the oldest unreleased %d", b.Seq, want)
	}
	read(t, c, 100)
}

func TestSecondConsumerOfARankIsRefused(t *testing.T) {
	dir, job := shmDir(t), jobName()
	testkit.Spawn(t, "producer", endless(dir, job, 1))
	c := mustAttach(t, job, 0, dir)
	if _, err := Attach(job, 0, Options{Dir: dir, Timeout: time.Second}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second attach: want ErrBusy, got %v", err)
	}
	c.Close()
	mustAttach(t, job, 0, dir)
}

func TestAttachBeyondTheJobsRanksFailsAtOnce(t *testing.T) {
	dir, job := shmDir(t), jobName()
	testkit.Spawn(t, "producer", endless(dir, job, 2))
	mustAttach(t, job, 1, dir) // the producer is up
	start := time.Now()
	_, err := Attach(job, 2, Options{Dir: dir, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrNoSuchRank) || !strings.Contains(err.Error(), "2 rank(s)") {
		t.Fatalf("rank 2 of a 2-rank job: want ErrNoSuchRank naming the count, got %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v: should fail at once, not at the timeout", d)
	}
}

func TestRestartAfterKillNeedsNoCleanup(t *testing.T) {
	dir, job := shmDir(t), jobName()
	a := testkit.Spawn(t, "producer", endless(dir, job, 2))
	c := mustAttach(t, job, 0, dir)
	read(t, c, 5)
	a.Kill()
	seg := shm.SegmentPath(dir, os.Getuid(), job, 0)
	if _, err := os.Stat(seg); err != nil {
		t.Fatalf("a killed producer should leave its segment behind: %v", err)
	}
	b := testkit.Spawn(t, "producer", endless(dir, job, 2))
	c2 := mustAttach(t, job, 0, dir)
	if pid := c2.Geometry().ProducerPID; int(pid) != b.Cmd.Process.Pid {
		t.Fatalf("attached to pid %d, new producer is %d", pid, b.Cmd.Process.Pid)
	}
	if got := read(t, c2, 10); got.Epoch != 0 {
		t.Fatalf("new producer starts at epoch %d", got.Epoch)
	}
	// The old mapping never looks alive again: after what it had published, it is gone,
	// even though a producer of the same job is alive.
	for {
		b, err := c.Next(3 * time.Second)
		if err == nil {
			c.Release(b)
			continue
		}
		if !errors.Is(err, ErrProducerGone) {
			t.Fatalf("old mapping: want ErrProducerGone, got %v", err)
		}
		break
	}
}

func TestCleanNeverRemovesALiveProducer(t *testing.T) {
	dir, job := shmDir(t), jobName()
	p := testkit.Spawn(t, "producer", endless(dir, job, 2))
	c := mustAttach(t, job, 1, dir)
	removed, err := shm.Clean(dir)
	if err != nil || len(removed) != 0 {
		t.Fatalf("clean with a live producer removed %v (err %v)", removed, err)
	}
	read(t, c, 20)
	p.Kill()
	removed, err = shm.Clean(dir)
	if err != nil || len(removed) != 3 {
		t.Fatalf("clean after the kill removed %v (err %v), want 2 segments and the lock", removed, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestSecondProducerOfAJobFails(t *testing.T) {
	dir, job := shmDir(t), jobName()
	p := testkit.Spawn(t, "producer", endless(dir, job, 1))
	c := mustAttach(t, job, 0, dir)
	_, err := synthetic.Run(context.Background(), endless(dir, job, 1))
	if !errors.Is(err, shm.ErrJobBusy) || !strings.Contains(err.Error(), strconv.Itoa(p.Cmd.Process.Pid)) {
		t.Fatalf("second producer: want ErrJobBusy naming pid %d, got %v", p.Cmd.Process.Pid, err)
	}
	read(t, c, 5) // the first one still serves
}

func TestSegmentsArePrivateAndExclusive(t *testing.T) {
	dir, job := shmDir(t), jobName()
	// A symlink planted where a segment will go must not redirect the producer's writes.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	seg := shm.SegmentPath(dir, os.Getuid(), job, 0)
	if err := os.Symlink(target, seg); err != nil {
		t.Fatal(err)
	}
	testkit.Spawn(t, "producer", endless(dir, job, 1))
	// A consumer is either refused (the link) or finds the producer's replacement.
	if c0, err := Attach(job, 0, Options{Dir: dir, Timeout: time.Second}); err == nil {
		c0.Close()
	} else if !errors.Is(err, ErrPermission) {
		t.Fatalf("attach through a planted symlink: %v", err)
	}
	for st, err := os.Lstat(seg); err != nil || !st.Mode().IsRegular(); st, err = os.Lstat(seg) {
		time.Sleep(5 * time.Millisecond) // until the producer has replaced the link
	}
	c := mustAttach(t, job, 0, dir)
	for _, p := range []string{seg, shm.LockPath(dir, os.Getuid(), job)} {
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v err %v, want a 0600 regular file", p, st.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("symlink target was written: %q", b)
	}
	c.Close()
	os.Chmod(seg, 0o644)
	if _, err := Attach(job, 0, Options{Dir: dir, Timeout: time.Second}); !errors.Is(err, ErrPermission) {
		t.Fatalf("attach to a 0644 segment: want ErrPermission, got %v", err)
	}
}

// A seek beyond the run the header names is refused with ErrRange and changes nothing.
func TestSeekBeyondTheRunIsRefused(t *testing.T) {
	dir, job := shmDir(t), jobName()
	cfg := producerConfig(dir, job)
	cfg.Epochs, cfg.Batches, cfg.Interval = 2, 10, 200*time.Microsecond
	testkit.Spawn(t, "producer", cfg)
	c := mustAttach(t, job, 0, dir)
	defer c.Close()
	for _, pos := range [][2]uint64{{2, 0}, {0, 11}} {
		if err := c.Seek(pos[0], pos[1]); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "epochs 0..1 and steps 0..9") {
			t.Fatalf("seek %v: want ErrRange naming the range, got %v", pos, err)
		}
	}
	if err := c.Seek(1, 10); err != nil { // the last epoch's end is a position
		t.Fatal(err)
	}
}
