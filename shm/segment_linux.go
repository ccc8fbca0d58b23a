package shm

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Segment is one mapped ring file.
type Segment struct {
	Path string
	Mem  []byte // the whole file, MAP_SHARED, read-write
	fd   int
}

// create makes a new segment of size bytes exclusively (mode 0600), reserves its pages,
// locks its producer byte and maps it. On failure nothing is left behind.
func create(path string, size int64) (s *Segment, err error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &Error{Op: "create", Path: path, Err: err}
	}
	defer func() {
		if err != nil {
			unix.Close(fd)
			unix.Unlink(path)
		}
	}()
	// Lock first: from here on the file is visibly alive, even while fallocate runs.
	if ok, err := tryLock(fd, producerByte, 1); !ok || err != nil {
		return nil, &Error{Op: "lock", Path: path, Err: errors.Join(err, errors.New("producer byte already locked"))}
	}
	// umask can only clear bits; make the mode exact anyway.
	if err := unix.Fchmod(fd, 0o600); err != nil {
		return nil, &Error{Op: "chmod", Path: path, Err: err}
	}
	if err := reserve(fd, size); err != nil {
		return nil, &Error{Op: "reserve", Path: path, Err: err}
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, &Error{Op: "map", Path: path, Err: err}
	}
	return &Segment{Path: path, Mem: mem, fd: fd}, nil
}

// reserve sizes the file and allocates its pages now, so a full tmpfs fails here and
// not later with SIGBUS on first touch.
func reserve(fd int, size int64) error {
	if err := unix.Ftruncate(fd, size); err != nil {
		return err
	}
	err := unix.Fallocate(fd, 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) {
		return nil
	}
	if errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("%w: %v", ErrNoSpace, err)
	}
	return err
}

// Open maps an existing segment for a consumer after checking that it is a regular file
// owned by this user with mode 0600. It takes no lock.
func Open(path string) (*Segment, error) { return open(path, false) }

// OpenReadOnly maps an existing segment read-only, as Open checks it, without faulting
// its pages in: for observers (`shmloader status`), which read the header only.
func OpenReadOnly(path string) (*Segment, error) { return open(path, true) }

func open(path string, readOnly bool) (*Segment, error) {
	flags, prot, mapFlags := unix.O_RDWR, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	if readOnly {
		flags, prot, mapFlags = unix.O_RDONLY, unix.PROT_READ, unix.MAP_SHARED
	}
	fd, err := unix.Open(path, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, &Error{Op: "open", Path: path, Err: ErrNotFound}
		}
		if errors.Is(err, unix.ELOOP) {
			return nil, &Error{Op: "open", Path: path, Err: fmt.Errorf("%w (a symbolic link)", ErrPermission)}
		}
		return nil, &Error{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &Error{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Getuid() || st.Mode&0o777 != 0o600 {
		unix.Close(fd)
		return nil, &Error{Op: "open", Path: path,
			Err: fmt.Errorf("%w (mode %o, owner %d)", ErrPermission, st.Mode&0o7777, st.Uid)}
	}
	if st.Size <= 0 {
		unix.Close(fd)
		return &Segment{Path: path, fd: -1}, nil
	}
	// MAP_POPULATE (a consumer): fault the pages in now, not on the first touch of each batch.
	mem, err := unix.Mmap(fd, 0, int(st.Size), prot, mapFlags)
	if err != nil {
		unix.Close(fd)
		return nil, &Error{Op: "map", Path: path, Err: err}
	}
	return &Segment{Path: path, Mem: mem, fd: fd}, nil
}

// ProducerAlive reports whether the producer of this very file still holds its lock.
func (s *Segment) ProducerAlive() (bool, error) {
	if s.fd < 0 {
		return false, nil
	}
	return isLocked(s.fd, producerByte, 1)
}

// ClaimConsumer takes the consumer lock of the ring, or fails with ErrConsumerBusy.
func (s *Segment) ClaimConsumer() error {
	ok, err := tryLock(s.fd, consumerByte, 1)
	if err != nil {
		return &Error{Op: "lock", Path: s.Path, Err: err}
	}
	if !ok {
		return &Error{Op: "lock", Path: s.Path, Err: ErrConsumerBusy}
	}
	return nil
}

// ConsumerAttached reports whether a live consumer holds this ring's consumer lock.
func (s *Segment) ConsumerAttached() (bool, error) { return isLocked(s.fd, consumerByte, 1) }

// Close unmaps the segment and closes its file, dropping any lock this handle held.
func (s *Segment) Close() error {
	var err error
	if s.Mem != nil {
		err = unix.Munmap(s.Mem)
		s.Mem = nil
	}
	if s.fd >= 0 {
		err = errors.Join(err, unix.Close(s.fd))
		s.fd = -1
	}
	return err
}
