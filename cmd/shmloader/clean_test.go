package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/shm"
)

// producer starts `shmloader debug-produce` of an endless job in dir and waits until
// every ring's header is published; the test's end kills it.
func producer(t *testing.T, dir, job string, ranks int) *exec.Cmd {
	t.Helper()
	cmd := testkit.Command(context.Background(), mainRole, "", "debug-produce", "--job", job, "--dir", dir, "--ranks", fmt.Sprint(ranks),
		"--epochs", "0", "--interval-us", "1000", "--quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ready := 0
		for r := 0; r < ranks; r++ {
			if _, err := lookAt(dir, job, r); err == nil {
				ready++
			}
		}
		if ready == ranks {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d rings ready after 30 s", job, ready, ranks)
		}
	}
}

// files is every file in dir (hidden ones too) and its size.
func files(t *testing.T, dir string) map[string]int64 {
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

// TestStatusAndCleanOfAKilledProducer: after kill -9 of a producer, status lists its job
// as dead with the files it left and the command that removes them, and `status JOB`
// exits 1 saying so, with the pid that its lock file and ring headers agree on (none when
// they disagree); clean's exit statuses are those its usage documents, and the files
// present before and after each command are exactly the ones it should leave.
func TestStatusAndCleanOfAKilledProducer(t *testing.T) {
	dir := segmentDir(t)
	uid := os.Getuid()
	dead := producer(t, dir, "train", 2)
	live := producer(t, dir, "live", 1)
	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()

	before := files(t, dir)
	left := map[string]int64{}
	var bytes int64
	for p, n := range before {
		if strings.HasPrefix(filepath.Base(p), fmt.Sprintf("shmloader-%d-train", uid)) {
			left[p] = n
			bytes += n
		}
	}
	if len(left) != 3 {
		t.Fatalf("a killed producer of 2 ranks left %v, want 2 segments and its lock", left)
	}
	unchanged := func(what string) {
		t.Helper()
		if now := files(t, dir); !reflect.DeepEqual(now, before) {
			t.Fatalf("%s changed the directory:\nbefore %v\nafter  %v", what, before, now)
		}
	}
	hint := cleanCommand(dir, "train")
	if !strings.Contains(hint, "shmloader clean train --dir "+dir) {
		t.Fatalf("hint %q", hint)
	}

	o := shmloader(t, "", time.Minute, "status", "--dir", dir)
	row := fmt.Sprintf("train  %d  3      %s  %s\n", dead.Process.Pid, units.Bytes(bytes), hint)
	if o.code != 0 || !strings.Contains(o.stdout, "left by dead producers in "+dir) || !strings.Contains(o.stdout, row) ||
		!strings.Contains(o.stdout, fmt.Sprintf("live  %d", live.Process.Pid)) {
		t.Errorf("status: want the live job and the dead one's row %q; got %v", row, o)
	}
	o = shmloader(t, "", time.Minute, "status", "--dir", dir, "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(o.stdout), &list); err != nil || o.code != 0 || len(list) != 2 {
		t.Fatalf("status --json: %v (%v)", o, err)
	}
	if list[0]["job"] != "live" || list[0]["state"] != "live" || list[1]["job"] != "train" || list[1]["state"] != "dead" ||
		list[1]["pid"] != float64(dead.Process.Pid) || list[1]["clean"] != hint || list[1]["bytes"] != float64(bytes) {
		t.Errorf("status --json: %v", list)
	}
	listed := map[string]int64{}
	for _, f := range list[1]["files"].([]any) {
		f := f.(map[string]any)
		listed[f["path"].(string)] = int64(f["size"].(float64))
	}
	if !reflect.DeepEqual(listed, left) {
		t.Errorf("status --json lists %v, the producer left %v", listed, left)
	}

	lock := shm.LockPath(dir, uid, "train")
	written, err := os.ReadFile(lock)
	if err != nil || string(written) != fmt.Sprintf("%d\n", dead.Process.Pid) {
		t.Fatalf("lock file holds %q (%v)", written, err)
	}
	for _, c := range []struct {
		lock, pid string
	}{
		{string(written), fmt.Sprintf(" (pid %d)", dead.Process.Pid)},
		{"", fmt.Sprintf(" (pid %d)", dead.Process.Pid)}, // the headers name it
		{"4242\n", ""}, // lock file and headers disagree: no pid at all
	} {
		if err := os.WriteFile(lock, []byte(c.lock), 0o600); err != nil {
			t.Fatal(err)
		}
		before = files(t, dir)
		want := fmt.Sprintf("shmloader status: job \"train\": its producer%s is dead; it left 3 files (%s) in %s: %s removes them\n",
			c.pid, units.Bytes(bytes-int64(len(written)-len(c.lock))), dir, hint)
		o = shmloader(t, "", time.Minute, "status", "train", "--dir", dir, "--once")
		if o.code != 1 || o.stderr != want || o.stdout != "" {
			t.Errorf("status train with lock file %q: want exit 1 and %q; got %v", c.lock, want, o)
		}
		unchanged("status train")
	}
	if err := os.WriteFile(lock, written, 0o600); err != nil {
		t.Fatal(err)
	}
	before = files(t, dir)
	o = shmloader(t, "", time.Minute, "status", "train", "--dir", dir, "--json")
	var doc struct {
		State, Clean string
		PID          int
		Files        []fileView
	}
	if err := json.Unmarshal([]byte(o.stdout), &doc); err != nil || o.code != 1 || doc.State != "dead" ||
		doc.PID != dead.Process.Pid || doc.Clean != hint || len(doc.Files) != 3 {
		t.Errorf("status train --json: want exit 1 and the dead job's document; got %v (%v)", o, err)
	}
	unchanged("status train --json")

	o = shmloader(t, "", time.Minute, "clean", "train", "--dry-run", "--dir", dir)
	if o.code != 0 || !strings.Contains(o.stdout, "3 stale file(s)") || !strings.Contains(o.stdout, "--dry-run removed nothing") {
		t.Errorf("clean train --dry-run: %v", o)
	}
	for p, n := range left {
		if line := fmt.Sprintf("would remove %s (%s)\n", p, units.Bytes(n)); !strings.Contains(o.stdout, line) {
			t.Errorf("clean train --dry-run does not list %q: %v", line, o)
		}
	}
	unchanged("clean train --dry-run")

	o = shmloader(t, "", time.Minute, "clean", "other", "--dir", dir)
	if o.code != 0 || !strings.Contains(o.stdout, fmt.Sprintf("job \"other\": nothing left in %s\n", dir)) {
		t.Errorf("clean other: %v", o)
	}
	unchanged("clean other")

	o = shmloader(t, "", time.Minute, "clean", "--dir", dir, "live")
	if o.code != exitLiveJob || !strings.Contains(o.stdout, fmt.Sprintf("job \"live\": served by a live producer (pid %d): left alone\n", live.Process.Pid)) {
		t.Errorf("clean live: want exit %d naming its pid; got %v", exitLiveJob, o)
	}
	unchanged("clean live")

	o = shmloader(t, "", time.Minute, "clean", "train", "live", "--dir", dir)
	if o.code != exitLiveJob || !strings.Contains(o.stdout, "clean: 3 stale file(s)") {
		t.Errorf("clean train live: want exit %d and train cleaned; got %v", exitLiveJob, o)
	}
	after := files(t, dir)
	for p, n := range left {
		if !strings.Contains(o.stdout, fmt.Sprintf("removed %s (%s)\n", p, units.Bytes(n))) {
			t.Errorf("clean does not name %s: %v", p, o)
		}
		delete(before, p)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("clean train live left %v, want exactly %v", after, before)
	}
	if jobs, err := shm.LiveJobs(dir); err != nil || len(jobs) != 1 || jobs[0].Name != "live" {
		t.Fatalf("live jobs after clean: %v (%v)", jobs, err)
	}
	o = shmloader(t, "", time.Minute, "status", "--dir", dir)
	if o.code != 0 || strings.Contains(o.stdout, "dead") {
		t.Errorf("status after clean: %v", o)
	}
}
