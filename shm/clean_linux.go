package shm

import (
	"errors"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// Clean removes this user's files in dir that belong to dead producers and returns their
// paths. It takes each job's lock first, as a starting producer does, so a job whose lock
// is held is live and is never touched.
func Clean(dir string) ([]string, error) {
	dir = Dir(dir)
	uid := os.Getuid()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	jobs := map[string]bool{}
	for _, e := range ents {
		if job, _, ok := parseName(e.Name(), uid); ok {
			jobs[job] = true
		}
	}
	names := make([]string, 0, len(jobs))
	for j := range jobs {
		names = append(names, j)
	}
	sort.Strings(names)
	var removed []string
	var errs []error
	for _, job := range names {
		r, err := cleanJob(dir, uid, job)
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

func cleanJob(dir string, uid int, job string) ([]string, error) {
	lockPath := LockPath(dir, uid, job)
	_, statErr := os.Lstat(lockPath)
	hadLock := statErr == nil
	fd, err := unix.Open(lockPath, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &Error{Op: "open", Path: lockPath, Err: err}
	}
	defer unix.Close(fd)
	ok, err := tryLock(fd, 0, 0)
	if err != nil || !ok {
		return nil, err // live job: leave it alone
	}
	// Holding the job lock, no producer can be creating segments for this job now; a
	// segment whose producer byte is still locked is kept all the same.
	removed, err := removeSegments(dir, uid, job, true)
	if err != nil {
		return removed, err
	}
	status := StatusPath(dir, uid, job)
	// The status file, and the temporary ones a producer killed while rewriting it left
	// (".shmloader-<uid>-<job>.status.*").
	temps, _ := filepath.Glob(filepath.Join(dir, "."+filepath.Base(status)+".*"))
	for _, p := range append([]string{status}, temps...) {
		if err := unix.Unlink(p); err == nil {
			removed = append(removed, filepath.Clean(p))
		} else if !errors.Is(err, unix.ENOENT) {
			return removed, &Error{Op: "remove", Path: p, Err: err}
		}
	}
	if err := ignoreMissing(unix.Unlink(lockPath)); err != nil {
		return removed, &Error{Op: "remove", Path: lockPath, Err: err}
	}
	if hadLock {
		removed = append(removed, filepath.Clean(lockPath))
	}
	return removed, nil
}
