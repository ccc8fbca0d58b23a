package shm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultDir is where segments live unless $SHMLOADER_SHM_DIR says otherwise.
const DefaultDir = "/dev/shm"

// MaxJobName is the longest job name; it must fit the ring header's job field with a NUL.
const MaxJobName = 40

// Dir returns dir if set, else $SHMLOADER_SHM_DIR, else DefaultDir.
func Dir(dir string) string {
	if dir != "" {
		return dir
	}
	if d := os.Getenv("SHMLOADER_SHM_DIR"); d != "" {
		return d
	}
	return DefaultDir
}

// ValidateJob checks a job name: 1..MaxJobName characters of [A-Za-z0-9_.-], not
// starting with '.' or '-'.
func ValidateJob(job string) error {
	if job == "" || len(job) > MaxJobName || job[0] == '.' || job[0] == '-' {
		return fmt.Errorf("%w %q: want 1-%d characters of [A-Za-z0-9_.-], not starting with '.' or '-'",
			ErrBadJobName, job, MaxJobName)
	}
	for _, c := range job {
		ok := c == '_' || c == '.' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return fmt.Errorf("%w %q: character %q not in [A-Za-z0-9_.-]", ErrBadJobName, job, c)
		}
	}
	return nil
}

func prefix(uid int, job string) string { return "shmloader-" + strconv.Itoa(uid) + "-" + job }

// LockPath is the job lock file of job for user uid.
func LockPath(dir string, uid int, job string) string {
	return filepath.Join(dir, prefix(uid, job)+".lock")
}

// StatusPath is the status file a live producer of job rewrites for observers
// (`shmloader status`): JSON, see PROTOCOL.md "Files".
func StatusPath(dir string, uid int, job string) string {
	return filepath.Join(dir, prefix(uid, job)+".status")
}

// SegmentPath is the ring segment of rank for job and user uid.
func SegmentPath(dir string, uid int, job string, rank int) string {
	return filepath.Join(dir, prefix(uid, job)+"-r"+strconv.Itoa(rank))
}

// The kinds of a job's files other than segments, as parseName returns them.
const (
	lockFile   = -1 // shmloader-<uid>-<job>.lock
	statusFile = -2 // shmloader-<uid>-<job>.status
	statusTemp = -3 // .shmloader-<uid>-<job>.status.<digits>: one being written (os.CreateTemp)
)

// parseName splits a file name of this user's files into job and kind: a segment (its
// rank, >= 0), lockFile, statusFile or statusTemp. ok is false for anything else.
func parseName(name string, uid int) (job string, rank int, ok bool) {
	p := "shmloader-" + strconv.Itoa(uid) + "-"
	if rest, found := strings.CutPrefix(name, "."+p); found {
		// The last ".status." is the job's own: the digits after it hold no dot, and a
		// job named "a.status.5" keeps its temporary files apart from job "a"'s.
		i := strings.LastIndex(rest, ".status.")
		if i <= 0 {
			return "", 0, false
		}
		if digits := rest[i+len(".status."):]; digits == "" || strings.Trim(digits, "0123456789") != "" {
			return "", 0, false
		}
		return rest[:i], statusTemp, ValidateJob(rest[:i]) == nil
	}
	if !strings.HasPrefix(name, p) {
		return "", 0, false
	}
	rest := name[len(p):]
	if j, found := strings.CutSuffix(rest, ".lock"); found {
		return j, lockFile, ValidateJob(j) == nil
	}
	if j, found := strings.CutSuffix(rest, ".status"); found {
		return j, statusFile, ValidateJob(j) == nil
	}
	i := strings.LastIndex(rest, "-r")
	if i <= 0 {
		return "", 0, false
	}
	r, err := strconv.Atoi(rest[i+2:])
	if err != nil || r < 0 || strconv.Itoa(r) != rest[i+2:] {
		return "", 0, false
	}
	return rest[:i], r, ValidateJob(rest[:i]) == nil
}
