package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Job is a producer's hold on a job: the job lock and its ring segments.
type Job struct {
	Dir      string
	Name     string
	Segments []*Segment
	lockPath string
	lockFD   int
}

// CreateJob takes the job lock, removes segments a dead producer of the same job left,
// checks free space, and creates one segment per entry of sizes (rank order). A live
// producer of the same job makes it fail with ErrJobBusy. On failure nothing is left
// behind.
func CreateJob(dir, job string, sizes []int64) (_ *Job, err error) {
	if err := ValidateJob(job); err != nil {
		return nil, err
	}
	dir = Dir(dir)
	uid := os.Getuid()
	lockPath := LockPath(dir, uid, job)
	fd, err := lockJob(lockPath)
	if err != nil {
		return nil, err
	}
	j := &Job{Dir: dir, Name: job, lockPath: lockPath, lockFD: fd}
	defer func() {
		if err != nil {
			j.Close()
		}
	}()
	if err := removeSegments(dir, uid, job); err != nil {
		return nil, err
	}
	var need uint64
	for _, s := range sizes {
		need += uint64(s)
	}
	if err := CheckFree(dir, need); err != nil {
		return nil, err
	}
	for rank, size := range sizes {
		s, err := create(SegmentPath(dir, uid, job, rank), size)
		if err != nil {
			return nil, err
		}
		j.Segments = append(j.Segments, s)
	}
	return j, nil
}

// busyRetries is how many times (10 ms apart) a busy job lock is tried again before the
// job counts as served by someone else.
const busyRetries = 20

// lockJob opens (creating if needed) and write-locks the job lock file, and records our
// pid in it. It retries if a cleaner unlinked the file between our open and our lock.
func lockJob(path string) (int, error) {
	for attempt := 0; attempt < 100; attempt++ {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return -1, &Error{Op: "open", Path: path, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != os.Getuid() || st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return -1, &Error{Op: "open", Path: path, Err: errors.Join(err, ErrPermission)}
		}
		ok, err := tryLock(fd, 0, 0)
		if err == nil && !ok && attempt < busyRetries {
			unix.Close(fd) // perhaps `shmloader clean` holding it for a moment: try again
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil || !ok {
			holder := readPid(fd)
			unix.Close(fd)
			if err != nil {
				return -1, &Error{Op: "lock", Path: path, Err: err}
			}
			return -1, &Error{Op: "lock", Path: path, Err: fmt.Errorf("%w (pid %s); stop it first, or pick another job name", ErrJobBusy, holder)}
		}
		var cur unix.Stat_t
		if unix.Stat(path, &cur) != nil || cur.Ino != st.Ino || cur.Dev != st.Dev {
			unix.Close(fd) // unlinked under us: lock the new file instead
			continue
		}
		unix.Fchmod(fd, 0o600)
		pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
		err = unix.Ftruncate(fd, 0)
		if err == nil {
			_, err = unix.Pwrite(fd, pid, 0)
		}
		if err != nil {
			unix.Close(fd)
			return -1, &Error{Op: "write", Path: path, Err: err}
		}
		return fd, nil
	}
	return -1, &Error{Op: "lock", Path: path, Err: errors.New("lock file keeps being replaced")}
}

func readPid(fd int) string {
	buf := make([]byte, 32)
	n, _ := unix.Pread(fd, buf, 0)
	if s := strings.TrimSpace(string(buf[:max(n, 0)])); s != "" {
		return s
	}
	return "unknown"
}

// Close unmaps and removes the job's segments, then removes and unlocks the job lock.
// Consumers still mapping a segment keep their memory; they see the producer gone.
func (j *Job) Close() error {
	var errs []error
	for _, s := range j.Segments {
		errs = append(errs, s.Close(), ignoreMissing(unix.Unlink(s.Path)))
	}
	j.Segments = nil
	if j.lockFD >= 0 {
		errs = append(errs, ignoreMissing(unix.Unlink(j.lockPath)), unix.Close(j.lockFD))
		j.lockFD = -1
	}
	return errors.Join(errs...)
}

func ignoreMissing(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// removeSegments unlinks job's segments in dir (a producer holding the job lock, before
// it creates its own).
func removeSegments(dir string, uid int, job string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return &Error{Op: "list", Path: dir, Err: err}
	}
	for _, e := range ents {
		j, rank, ok := parseName(e.Name(), uid)
		if !ok || j != job || rank < 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := ignoreMissing(unix.Unlink(p)); err != nil {
			return &Error{Op: "remove", Path: p, Err: fmt.Errorf("%w%s", err, notOurs(p, uid))}
		}
	}
	return nil
}

// notOurs explains a segment name of ours that we may not remove: a file another user
// made under it (in a sticky directory such as /dev/shm only its owner removes it).
func notOurs(path string, uid int) string {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || int(st.Uid) == uid {
		return ""
	}
	return fmt.Sprintf(" (the file is owned by uid %d, not by this user: another user made it under this job's name; it is not used, but only its owner or root can remove it, or serve this job with another --dir)", st.Uid)
}

// segmentLive reports whether a producer holds the segment's producer byte. A file we
// cannot open or check counts as live, so it is never removed by mistake.
func segmentLive(path string) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return !errors.Is(err, unix.ENOENT)
	}
	defer unix.Close(fd)
	live, err := isLocked(fd, producerByte, 1)
	return live || err != nil
}
