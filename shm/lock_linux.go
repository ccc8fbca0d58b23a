package shm

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Byte ranges locked in a segment (ring/PROTOCOL.md, "Liveness and ownership").
const (
	producerByte = 0
	consumerByte = 1
)

// tryLock takes an open-file-description write lock on [start, start+n) without waiting
// (n == 0 means to the end of the file). It reports false if another holder has it.
func tryLock(fd int, start, n int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: start, Len: n}
	err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return false, nil
	}
	return err == nil, err
}

// isLocked reports whether some other open file description holds a write lock
// on [start, start+n). It takes no lock itself.
func isLocked(fd int, start, n int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: start, Len: n}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk); err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}
