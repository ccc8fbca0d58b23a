package shm

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/shmloader/shmloader/internal/units"
)

// FreeBytes returns the bytes an unprivileged user can still allocate in dir.
func FreeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, &Error{Op: "statfs", Path: dir, Err: err}
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// CheckFree fails with ErrNoSpace, and says how to raise the limit, when dir has fewer
// than need bytes free.
func CheckFree(dir string, need uint64) error {
	free, err := FreeBytes(dir)
	if err != nil {
		return err
	}
	if free >= need {
		return nil
	}
	return fmt.Errorf("%w in %s: the rings need %s, only %s is free.\n"+
		"  Lower ranks, ring depth or batch size, or give the host more shared memory:\n"+
		"  docker run --shm-size=%s ...; in Kubernetes mount an emptyDir with medium: Memory\n"+
		"  (sizeLimit >= %s) at /dev/shm; or point SHMLOADER_SHM_DIR at a larger tmpfs",
		ErrNoSpace, dir, units.Bytes(need), units.Bytes(free), dockerSize(need), units.Bytes(need))
}

// dockerSize rounds need up to whole gibibytes (at least 1g) for a --shm-size hint,
// with a quarter more for the rest of the container.
func dockerSize(need uint64) string {
	g := (need + need/4 + (1<<30 - 1)) >> 30
	return fmt.Sprintf("%dg", max(g, 1))
}
