package shm

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func tmpShm(t *testing.T) string {
	d, err := os.MkdirTemp("/dev/shm", "shmloader-shm-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestValidateJob(t *testing.T) {
	for _, ok := range []string{"train", "a", "job_1.v2-x", strings.Repeat("j", MaxJobName)} {
		if err := ValidateJob(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".hidden", "-x", "a/b", "a b", "ü", strings.Repeat("j", MaxJobName+1), "..", "a\x00"} {
		if err := ValidateJob(bad); !errors.Is(err, ErrBadJobName) {
			t.Errorf("%q: want ErrBadJobName, got %v", bad, err)
		}
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for _, rank := range []int{0, 7, 123} {
		job, r, ok := parseName(filepath.Base(SegmentPath("/d", 42, "my-job.r1", rank)), 42)
		if !ok || job != "my-job.r1" || r != rank {
			t.Errorf("segment of rank %d parsed as %q %d %v", rank, job, r, ok)
		}
	}
	if job, r, ok := parseName(filepath.Base(LockPath("/d", 42, "j")), 42); !ok || job != "j" || r != -1 {
		t.Errorf("lock parsed as %q %d %v", job, r, ok)
	}
	for _, other := range []string{"shmloader-43-j-r0", "shmloader-42-j-r01", "shmloader-42-j-rx", "shmloader-42--r0", "x", "shmloader-42-j"} {
		if _, _, ok := parseName(other, 42); ok {
			t.Errorf("%q accepted as ours", other)
		}
	}
}

func TestShortSharedMemorySaysHowToFixIt(t *testing.T) {
	dir := tmpShm(t)
	_, err := CreateJob(dir, "big", []int64{1 << 50})
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("want ErrNoSpace, got %v", err)
	}
	for _, want := range []string{"1.0 PiB", "--shm-size", "emptyDir", "medium: Memory", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("a failed start left %v", left)
	}
}

func TestCleanRemovesOnlyUnlockedOrphans(t *testing.T) {
	dir := tmpShm(t)
	uid := os.Getuid()
	dead := SegmentPath(dir, uid, "gone", 0)
	live := SegmentPath(dir, uid, "alive", 0)
	foreign := filepath.Join(dir, "shmloader-notours")
	for _, p := range []string{dead, live, foreign} {
		if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(live, unix.O_RDWR, 0) // a producer holding the live one
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if ok, err := tryLock(fd, producerByte, 1); !ok || err != nil {
		t.Fatal("lock", err)
	}
	removed, err := Clean(dir)
	if err != nil || len(removed) != 1 || removed[0] != dead {
		t.Fatalf("clean removed %v (err %v), want only %s", removed, err, dead)
	}
	for _, p := range []string{live, foreign} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func TestJobLockIsExclusiveAndReleasedOnClose(t *testing.T) {
	dir := tmpShm(t)
	j, err := CreateJob(dir, "j", []int64{8192, 8192})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateJob(dir, "j", []int64{8192}); !errors.Is(err, ErrJobBusy) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second producer: want ErrJobBusy naming the pid, got %v", err)
	}
	if len(j.Segments) != 2 || len(j.Segments[1].Mem) != 8192 {
		t.Fatalf("segments %+v", j.Segments)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("close left %v", left)
	}
	j2, err := CreateJob(dir, "j", []int64{8192})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	j2.Close()
}

func TestLiveJobsListsOnlyLiveProducers(t *testing.T) {
	dir := t.TempDir()
	a, err := CreateJob(dir, "alive", []int64{4096, 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := CreateJob(dir, "gone", []int64{4096})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	// A dead producer's files: a lock file nobody holds, a segment and a status file.
	uid := os.Getuid()
	status := StatusPath(dir, uid, "dead")
	for _, p := range []string{LockPath(dir, uid, "dead"), SegmentPath(dir, uid, "dead", 0), status,
		filepath.Join(dir, "."+filepath.Base(status)+".123456")} {
		if err := os.WriteFile(p, []byte("1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	live, err := LiveJobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Name != "alive" || live[0].PID != strconv.Itoa(os.Getpid()) || len(live[0].Ranks) != 2 {
		t.Fatalf("live jobs %+v, want alive with ranks 0 and 1", live)
	}
	removed, err := Clean(dir)
	if err != nil || len(removed) != 4 {
		t.Fatalf("clean removed %q (%v), want the dead job's lock, segment, status file and a temporary one", removed, err)
	}
}
