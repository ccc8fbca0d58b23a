package cache

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

var pid = os.Getpid()

// tryFlock takes flock(how) without waiting; false: another open file description has it.
func tryFlock(fd int, how int) (bool, error) {
	err := unix.Flock(fd, how|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	for errors.Is(err, unix.EINTR) {
		err = unix.Flock(fd, how|unix.LOCK_NB)
	}
	return err == nil, err
}

// flockWait takes flock(how), polling, for at most timeout: every wait has a bound, and
// locks here are held for a manifest write, a scan or a clear.
func flockWait(fd int, how int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for sleep := 50 * time.Microsecond; ; sleep = min(2*sleep, 10*time.Millisecond) {
		ok, err := tryFlock(fd, how)
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%v)", ErrTimeout, timeout)
		}
		time.Sleep(sleep)
	}
}

// reserve gives the open file fd all size bytes now, so a full disk fails here and not
// later as SIGBUS on a store into the mapping.
func reserve(fd int, size int64, warn func(kind, format string, args ...any)) error {
	err := unix.Fallocate(fd, 0, 0, size)
	for errors.Is(err, unix.EINTR) {
		err = unix.Fallocate(fd, 0, 0, size)
	}
	if errors.Is(err, unix.EOPNOTSUPP) {
		warn("fallocate", "file system has no fallocate; writing zeros to reserve entries")
		err = writeZeros(fd, size)
	}
	if diskFull(err) {
		return fmt.Errorf("%w: %d bytes: %v", ErrNoSpace, size, err)
	}
	return err
}

// diskFull says whether err is the file system refusing more bytes: no space, quota or
// file size limit. The cache reports each as ErrNoSpace.
func diskFull(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, unix.EFBIG)
}

func writeZeros(fd int, size int64) error {
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; {
		n, err := unix.Pwrite(fd, zeros[:min(int64(len(zeros)), size-off)], off)
		if err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// fsKind classifies a statfs type: "ram" (the cache takes memory), "network" (locks and
// shared mmap may not be coherent between hosts or even processes), or "".
func fsKind(magic uint32) string {
	switch magic {
	case unix.TMPFS_MAGIC, unix.RAMFS_MAGIC:
		return "ram"
	case unix.NFS_SUPER_MAGIC, unix.SMB_SUPER_MAGIC, 0xFF534D42 /* CIFS */, 0xFE534D42, /* SMB2 */
		unix.FUSE_SUPER_MAGIC, unix.V9FS_MAGIC, unix.CEPH_SUPER_MAGIC:
		return "network"
	}
	return ""
}

// statDir returns dir's file system kind and the bytes still free to this user.
func statDir(dir string) (kind string, free int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", 0, &Error{Op: "statfs", Path: dir, Err: err}
	}
	return fsKind(uint32(st.Type)), int64(st.Bavail) * int64(st.Bsize), nil
}

// lockers lists the pids that hold flock locks on path, from /proc/locks; nil if unknown.
func lockers(path string) []int {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  READ  1234 08:01:5678 0 EOF"; waiters have "->" after "1:".
		fl := strings.Fields(sc.Text())
		if len(fl) < 6 || fl[1] != "FLOCK" {
			continue
		}
		dev := strings.Split(fl[5], ":")
		if len(dev) != 3 {
			continue
		}
		maj, _ := strconv.ParseUint(dev[0], 16, 32)
		mnr, _ := strconv.ParseUint(dev[1], 16, 32)
		ino, _ := strconv.ParseUint(dev[2], 10, 64)
		p, err := strconv.Atoi(fl[4])
		if err == nil && p > 0 && ino == st.Ino && uint32(maj) == unix.Major(st.Dev) && uint32(mnr) == unix.Minor(st.Dev) {
			pids = append(pids, p)
		}
	}
	return pids
}

// sameFile reports whether path still names the file identified by ino, so a process
// that found a file bad never unlinks a good one another process put there since.
func sameFile(path string, ino uint64) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Ino == ino
}

func openFlags(write bool) int {
	if write {
		return unix.O_RDWR | unix.O_CLOEXEC | unix.O_NOFOLLOW
	}
	return unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW
}
