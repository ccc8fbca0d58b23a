package shm

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// listing is every file in dir and its size.
func listing(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Join(dir, e.Name())] = fi.Size()
	}
	return out
}

// deadJob writes what a producer of job killed mid-run leaves: a lock file naming pid
// that nobody holds, a segment per rank, the status file and a half-written copy of it.
// It returns those files and their sizes.
func deadJob(t *testing.T, dir, job string, pid string, ranks int) map[string]int64 {
	t.Helper()
	uid := os.Getuid()
	status := StatusPath(dir, uid, job)
	files := map[string][]byte{
		LockPath(dir, uid, job): []byte(pid + "\n"),
		status:                  []byte(`{"format": 1}`),
		filepath.Join(dir, "."+filepath.Base(status)+".3141592653"): []byte(`{"form`),
	}
	for r := 0; r < ranks; r++ {
		files[SegmentPath(dir, uid, job, r)] = make([]byte, 8192*(r+1))
	}
	want := map[string]int64{}
	for p, data := range files {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		want[p] = int64(len(data))
	}
	return want
}

func minus(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for p, n := range a {
		if _, ok := b[p]; !ok {
			out[p] = n
		}
	}
	return out
}

func filesOf(l Leftovers) map[string]int64 {
	out := map[string]int64{}
	for _, f := range l.Files {
		out[f.Path] = f.Size
	}
	return out
}

// TestCleanJobsRemovesOnlyTheNamedJobs: clean of one job removes exactly that job's
// files (segments, lock, status file, a half-written status file) and reports them with
// their sizes and the pid its lock file names; other dead jobs' files stay, including
// jobs whose names extend the cleaned one's.
func TestCleanJobsRemovesOnlyTheNamedJobs(t *testing.T) {
	dir := tmpShm(t)
	train := deadJob(t, dir, "train", "4242", 2)
	for _, other := range []string{"eval", "train-r1", "train.status.5", "train.lock"} {
		deadJob(t, dir, other, "77", 1)
	}
	before := listing(t, dir)

	got, err := CleanJobs(dir, CleanOptions{Jobs: []string{"train", "train"}})
	if err != nil {
		t.Fatal(err)
	}
	after := listing(t, dir)
	if removed := minus(before, after); !reflect.DeepEqual(removed, train) {
		t.Fatalf("clean train removed %v, want exactly %v", removed, train)
	}
	if len(after) != len(before)-len(train) {
		t.Fatalf("clean train left %d files of %d, want %d", len(after), len(before), len(before)-len(train))
	}
	if len(got) != 1 || got[0].Job != "train" || got[0].Live || got[0].PID != 4242 || !reflect.DeepEqual(filesOf(got[0]), train) {
		t.Fatalf("clean reported %+v, want train's %d files and pid 4242", got, len(train))
	}
	var sum int64
	for _, n := range train {
		sum += n
	}
	if got[0].Bytes() != sum {
		t.Errorf("Bytes %d, want %d", got[0].Bytes(), sum)
	}
	fs := got[0].Files
	if fs[0].Rank != 0 || fs[1].Rank != 1 || fs[len(fs)-1].Path != LockPath(dir, os.Getuid(), "train") || fs[len(fs)-1].Rank != -1 {
		t.Errorf("files not in the order segments by rank ... lock: %+v", fs)
	}

	// Nothing left of it: reported as such, and nothing else is touched.
	got, err = CleanJobs(dir, CleanOptions{Jobs: []string{"train"}})
	if err != nil || len(got) != 1 || got[0].Live || len(got[0].Files) != 0 {
		t.Fatalf("second clean of train: %+v (%v), want nothing left", got, err)
	}
	if again := listing(t, dir); !reflect.DeepEqual(again, after) {
		t.Fatalf("second clean of train changed the directory: %v -> %v", after, again)
	}
}

// TestCleanDryRunRemovesNothing: a dry run lists exactly the files a clean then removes,
// with their sizes, and leaves every file in place, the lock files included (it creates
// none either).
func TestCleanDryRunRemovesNothing(t *testing.T) {
	dir := tmpShm(t)
	want := deadJob(t, dir, "a", "11", 3)
	for p, n := range deadJob(t, dir, "b", "12", 1) {
		want[p] = n
	}
	orphan := SegmentPath(dir, os.Getuid(), "nolock", 0) // a segment without a lock file
	if err := os.WriteFile(orphan, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	want[orphan] = 4096
	before := listing(t, dir)

	dry, err := CleanJobs(dir, CleanOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if after := listing(t, dir); !reflect.DeepEqual(after, before) {
		t.Fatalf("dry run changed the directory: %v -> %v", before, after)
	}
	listed := map[string]int64{}
	var jobs []string
	for _, l := range dry {
		jobs = append(jobs, l.Job)
		for p, n := range filesOf(l) {
			listed[p] = n
		}
	}
	if !reflect.DeepEqual(jobs, []string{"a", "b", "nolock"}) || !reflect.DeepEqual(listed, want) {
		t.Fatalf("dry run listed jobs %v, files %v; want a, b, nolock and %v", jobs, listed, want)
	}

	real, err := CleanJobs(dir, CleanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(real, dry) {
		t.Fatalf("clean removed %+v, its dry run listed %+v", real, dry)
	}
	if left := listing(t, dir); len(left) != 0 {
		t.Fatalf("clean left %v", left)
	}
}

// TestCleanLeavesALiveJobAlone: a live producer's job, named or not, dry run or not, is
// reported live with its pid and keeps every file; so does one whose lock file was
// removed while its producer holds its segments.
func TestCleanLeavesALiveJobAlone(t *testing.T) {
	dir := tmpShm(t)
	live, err := CreateJob(dir, "live", []int64{8192, 8192})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	unlocked, err := CreateJob(dir, "nolockfile", []int64{8192})
	if err != nil {
		t.Fatal(err)
	}
	defer unlocked.Close()
	if err := os.Remove(LockPath(dir, os.Getuid(), "nolockfile")); err != nil {
		t.Fatal(err)
	}
	dead := deadJob(t, dir, "dead", "9", 1)
	before := listing(t, dir)

	for _, opt := range []CleanOptions{
		{Jobs: []string{"live", "nolockfile"}, DryRun: true},
		{Jobs: []string{"live", "nolockfile"}},
		{DryRun: true},
	} {
		got, err := CleanJobs(dir, opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		byJob := map[string]Leftovers{}
		for _, l := range got {
			byJob[l.Job] = l
		}
		if l := byJob["live"]; !l.Live || l.PID != os.Getpid() || len(l.Files) != 0 {
			t.Errorf("%+v: live job reported %+v, want live with pid %d", opt, l, os.Getpid())
		}
		if l := byJob["nolockfile"]; !l.Live || l.PID != 0 || len(l.Files) != 0 {
			t.Errorf("%+v: a job whose producer holds its segment reported %+v, want live, no pid", opt, l)
		}
		if after := listing(t, dir); !reflect.DeepEqual(after, before) {
			t.Fatalf("%+v changed the directory: %v -> %v", opt, before, after)
		}
	}

	got, err := CleanJobs(dir, CleanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if removed := minus(before, listing(t, dir)); !reflect.DeepEqual(removed, dead) {
		t.Fatalf("clean of every job removed %v, want only the dead job's %v", removed, dead)
	}
	var names []string
	for _, l := range got {
		names = append(names, l.Job)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{"dead", "live", "nolockfile"}) {
		t.Errorf("clean reported jobs %v", names)
	}
}

func TestCleanJobsRefusesBadNames(t *testing.T) {
	dir := tmpShm(t)
	before := listing(t, dir)
	for _, bad := range []string{"", "../x", ".hidden", "a b"} {
		if _, err := CleanJobs(dir, CleanOptions{Jobs: []string{"ok", bad}}); !errors.Is(err, ErrBadJobName) {
			t.Errorf("%q: want ErrBadJobName, got %v", bad, err)
		}
	}
	if after := listing(t, dir); !reflect.DeepEqual(after, before) {
		t.Fatalf("changed the directory: %v", after)
	}
}
