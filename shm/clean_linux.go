package shm

import (
	"errors"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// Clean removes this user's files in dir that belong to dead producers and returns their
// paths. A job whose lock is held is live and is never touched; segments with no lock file
// are removed only if no producer holds them.
func Clean(dir string) ([]string, error) {
	dir = Dir(dir)
	uid := os.Getuid()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	jobs := map[string]bool{} // job -> has a lock file
	for _, e := range ents {
		if job, rank, ok := parseName(e.Name(), uid); ok {
			jobs[job] = jobs[job] || rank < 0
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
		r, err := cleanJob(dir, uid, job, jobs[job])
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

func cleanJob(dir string, uid int, job string, hasLock bool) ([]string, error) {
	if !hasLock {
		return removeSegments(dir, uid, job, true)
	}
	lockPath := LockPath(dir, uid, job)
	fd, err := unix.Open(lockPath, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, ignoreMissing(err)
	}
	defer unix.Close(fd)
	ok, err := tryLock(fd, 0, 0)
	if err != nil || !ok {
		return nil, err // live job (or unlockable): leave it alone
	}
	// Holding the job lock, no producer can be creating segments for this job now.
	removed, err := removeSegments(dir, uid, job, true)
	if err != nil {
		return removed, err
	}
	if err := ignoreMissing(unix.Unlink(lockPath)); err != nil {
		return removed, &Error{Op: "remove", Path: lockPath, Err: err}
	}
	return append(removed, filepath.Clean(lockPath)), nil
}
