package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// File is one of a job's files in the segment directory.
type File struct {
	Path string
	Size int64 // bytes, as lstat(2) gives them
	Rank int   // a ring segment's rank; -1 for the lock, status and half-written status files
}

// Leftovers is what clean finds of one job: a live job, or the files a dead one left.
type Leftovers struct {
	Job string
	// Live: a live producer serves the job (it holds the job lock, or a segment's
	// producer byte); none of its files is touched, and Files is empty.
	Live bool
	// PID is the pid written in the job's lock file: the live producer's, or the last
	// one's of a dead job. 0 when there is no lock file or it names no pid, and for a
	// live job known only by its segments.
	PID int
	// Files are a dead job's files: those removed, or with DryRun those that would be,
	// segments first (by rank) and the lock last.
	Files []File
}

// Bytes is the size of the files.
func (l Leftovers) Bytes() int64 {
	var n int64
	for _, f := range l.Files {
		n += f.Size
	}
	return n
}

// CleanOptions selects what CleanJobs does.
type CleanOptions struct {
	// Jobs limits it to these jobs, each checked by ValidateJob; none: every job of this
	// user with a file in the directory.
	Jobs []string
	// DryRun takes no lock and removes nothing: it asks the kernel whether each job's
	// locks are held, as a clean would find them now, and reports what it would remove.
	DryRun bool
}

// Clean removes this user's files in dir that belong to dead producers and returns their
// paths. It is CleanJobs of every job.
func Clean(dir string) ([]string, error) {
	jobs, err := CleanJobs(dir, CleanOptions{})
	var removed []string
	for _, l := range jobs {
		for _, f := range l.Files {
			removed = append(removed, f.Path)
		}
	}
	return removed, err
}

// CleanJobs removes the files of dead producers in dir: each ring segment, the job's lock
// and status file, and the status file's half-written temporary copies. It takes each
// job's lock first, as a starting producer does, so a job whose lock is held is live and
// is never touched; so is a job whose segment a producer still holds (one whose lock
// file was removed). Liveness is always a kernel lock, never a pid. It returns one
// Leftovers per job, in the order of opt.Jobs (duplicates dropped) or by name; a named
// job with nothing left has no Files.
func CleanJobs(dir string, opt CleanOptions) ([]Leftovers, error) {
	for _, job := range opt.Jobs {
		if err := ValidateJob(job); err != nil {
			return nil, err
		}
	}
	dir = Dir(dir)
	uid := os.Getuid()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	files := map[string][]string{} // job -> names of its files
	for _, e := range ents {
		if job, _, ok := parseName(e.Name(), uid); ok {
			files[job] = append(files[job], e.Name())
		}
	}
	jobs := opt.Jobs
	if len(jobs) == 0 {
		for job := range files {
			jobs = append(jobs, job)
		}
		sort.Strings(jobs)
	}
	var out []Leftovers
	var errs []error
	seen := map[string]bool{}
	for _, job := range jobs {
		if seen[job] {
			continue
		}
		seen[job] = true
		l, err := cleanJob(dir, uid, job, files[job], opt.DryRun)
		out = append(out, l)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// cleanJob cleans (or with dryRun, looks at) one job whose file names in dir are names.
func cleanJob(dir string, uid int, job string, names []string, dryRun bool) (Leftovers, error) {
	l := Leftovers{Job: job}
	if len(names) == 0 {
		return l, nil // nothing to remove, and no lock file to create for it
	}
	lockPath := LockPath(dir, uid, job)
	_, statErr := os.Lstat(lockPath)
	hadLock := statErr == nil
	flags := unix.O_RDONLY // a dry run only asks F_OFD_GETLK, which a read-only file allows
	if !dryRun {
		flags = unix.O_RDWR | unix.O_CREAT
	}
	fd, err := unix.Open(lockPath, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	switch {
	case err == nil:
		defer unix.Close(fd)
		var live bool
		if dryRun {
			live, err = isLocked(fd, 0, 0)
		} else {
			var ok bool
			ok, err = tryLock(fd, 0, 0)
			live = !ok
		}
		if err != nil {
			return l, &Error{Op: "lock", Path: lockPath, Err: err}
		}
		l.PID = pidIn(fd)
		if live {
			l.Live = true
			return l, nil
		}
	case dryRun && errors.Is(err, unix.ENOENT):
		hadLock = false // a dry run creates nothing: judge the segments by their own locks
	default:
		return l, &Error{Op: "open", Path: lockPath, Err: err}
	}
	// Holding the job lock (or, in a dry run, having seen it free), no producer can be
	// creating segments for this job; one that still holds a segment lost its lock file
	// and is alive all the same.
	var segs, others []File
	for _, name := range names {
		_, kind, _ := parseName(name, uid)
		p := filepath.Join(dir, name)
		var st unix.Stat_t
		if kind == lockFile || unix.Lstat(p, &st) != nil {
			continue // the lock goes last; a file gone meanwhile is not ours to report
		}
		f := File{Path: p, Size: st.Size, Rank: -1}
		if kind < 0 {
			others = append(others, f)
			continue
		}
		if segmentLive(p) {
			if !dryRun && !hadLock {
				unix.Unlink(lockPath) // the one we made to take the lock
			}
			return Leftovers{Job: job, Live: true}, nil
		}
		f.Rank = kind
		segs = append(segs, f)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].Rank < segs[j].Rank })
	sort.Slice(others, func(i, j int) bool { return others[i].Path < others[j].Path })
	todo := append(segs, others...)
	if hadLock {
		var st unix.Stat_t
		if unix.Lstat(lockPath, &st) == nil {
			todo = append(todo, File{Path: lockPath, Size: st.Size, Rank: -1})
		}
	}
	if dryRun {
		l.Files = todo
		return l, nil
	}
	for _, f := range todo {
		err := unix.Unlink(f.Path)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return l, &Error{Op: "remove", Path: f.Path, Err: fmt.Errorf("%w%s", err, notOurs(f.Path, uid))}
		}
		l.Files = append(l.Files, f)
	}
	if !hadLock {
		if err := ignoreMissing(unix.Unlink(lockPath)); err != nil {
			return l, &Error{Op: "remove", Path: lockPath, Err: err}
		}
	}
	return l, nil
}

// pidIn is the pid a producer wrote into its lock file, 0 if there is none.
func pidIn(fd int) int {
	buf := make([]byte, 32)
	n, _ := unix.Pread(fd, buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:max(n, 0)])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
