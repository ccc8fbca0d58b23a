package shm

import (
	"errors"
	"fmt"
)

// Sentinel errors. Wrapped errors carry the path; test with errors.Is.
var (
	// ErrJobBusy: another live process already serves this job.
	ErrJobBusy = errors.New("job is already served by a live producer")
	// ErrConsumerBusy: the ring already has a live consumer.
	ErrConsumerBusy = errors.New("ring already has a consumer")
	// ErrNoSpace: the shared-memory directory cannot hold the segments.
	ErrNoSpace = errors.New("not enough free shared memory")
	// ErrPermission: a segment is not a 0600 regular file owned by this user.
	ErrPermission = errors.New("segment is not a 0600 regular file owned by this user")
	// ErrBadJobName: the job name is empty, too long or has characters outside [A-Za-z0-9_.-].
	ErrBadJobName = errors.New("invalid job name")
	// ErrNotFound: no segment exists for this job and rank.
	ErrNotFound = errors.New("no segment for this job and rank")
)

// Error is an operation on a shared-memory file that failed.
type Error struct {
	Op   string // "create", "open", "lock", "map", ...
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("shm %s %s: %v", e.Op, e.Path, e.Err) }
func (e *Error) Unwrap() error { return e.Err }
