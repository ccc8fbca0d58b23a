package shm

import (
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// LiveJob is a job of this user whose producer is alive: its job lock is held.
type LiveJob struct {
	Name  string
	PID   string // as the producer wrote it into the lock file
	Ranks []int  // ranks whose segments exist
}

// LiveJobs lists this user's live jobs in dir, by name. It only looks: no lock is taken
// or broken, nothing is removed.
func LiveJobs(dir string) ([]LiveJob, error) {
	dir = Dir(dir)
	uid := os.Getuid()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Err: err}
	}
	ranks := map[string][]int{}
	var locks []string
	for _, e := range ents {
		job, rank, ok := parseName(e.Name(), uid)
		switch {
		case !ok:
		case rank == lockFile:
			locks = append(locks, job)
		case rank >= 0:
			ranks[job] = append(ranks[job], rank)
		}
	}
	var live []LiveJob
	for _, job := range locks {
		pid, alive := lockHeld(LockPath(dir, uid, job))
		if !alive {
			continue
		}
		rs := ranks[job]
		sort.Ints(rs)
		live = append(live, LiveJob{Name: job, PID: pid, Ranks: rs})
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	return live, nil
}

// lockHeld reports whether a producer holds the job lock at path, and the pid it wrote.
func lockHeld(path string) (pid string, held bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	held, err = isLocked(fd, 0, 0)
	if err != nil || !held {
		return "", false
	}
	return strings.TrimSpace(readPid(fd)), true
}
