package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/ring"
	"github.com/shmloader/shmloader/shm"
)

// What a dead producer left, as status shows it: the files `shmloader clean JOB` would
// remove now (shm.CleanJobs with DryRun), and the command that removes them.

// deadView is a dead job in status's --json: an entry of the job list, and the document
// of `status JOB`.
type deadView struct {
	Job   string     `json:"job"`
	State string     `json:"state"` // "dead"
	PID   int        `json:"pid"`   // its producer's, 0 where neither lock file nor header names one
	Ranks []int      `json:"ranks"` // of the segments left
	Files []fileView `json:"files"`
	Bytes int64      `json:"bytes"`
	Clean string     `json:"clean"` // the command that removes the files
}

type fileView struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// deadJobs lists the jobs in dir (all of them, or the named ones) whose producer is dead
// and left files. It takes no lock and removes nothing. A job whose files cannot be
// looked at is left out: status only observes, and clean will say what stops it.
func deadJobs(dir string, jobs ...string) ([]deadView, error) {
	left, err := shm.CleanJobs(dir, shm.CleanOptions{Jobs: jobs, DryRun: true})
	if left == nil && err != nil {
		return nil, err
	}
	out := []deadView{}
	for _, l := range left {
		if l.Live || len(l.Files) == 0 {
			continue
		}
		v := deadView{Job: l.Job, State: "dead", PID: leftPID(dir, l), Ranks: []int{}, Bytes: l.Bytes(),
			Clean: cleanCommand(dir, l.Job)}
		for _, f := range l.Files {
			v.Files = append(v.Files, fileView{Path: f.Path, Size: f.Size})
			if f.Rank >= 0 {
				v.Ranks = append(v.Ranks, f.Rank)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// leftPID is the pid of a dead job's producer as its lock file and its segments' headers
// name it; 0 if none does, or they disagree: better nothing than a guess.
func leftPID(dir string, l shm.Leftovers) int {
	pids := map[int]bool{}
	if l.PID > 0 {
		pids[l.PID] = true
	}
	for _, f := range l.Files {
		if f.Rank < 0 {
			continue
		}
		seg, err := shm.OpenReadOnly(f.Path)
		if err != nil {
			continue
		}
		if g, err := ring.Validate(seg.Mem, l.Job, f.Rank); err == nil && g.ProducerPID != 0 {
			pids[int(g.ProducerPID)] = true
		}
		seg.Close()
	}
	if len(pids) != 1 {
		return 0
	}
	for pid := range pids {
		return pid
	}
	return 0
}

// message is what `status JOB` says of a dead job.
func (v deadView) message(dir string) string {
	pid := ""
	if v.PID != 0 {
		pid = fmt.Sprintf(" (pid %d)", v.PID)
	}
	return fmt.Sprintf("job %q: its producer%s is dead; it left %s (%s) in %s: %s removes them",
		v.Job, pid, count(len(v.Files), "file"), units.Bytes(v.Bytes), dir, v.Clean)
}

// deadJobStatus is `status JOB` for a job without a live producer: if a dead one left
// files, the error that says so (and with asJSON, the job's document on w); else nil.
func deadJobStatus(w io.Writer, dir, job string, asJSON bool) error {
	dead, err := deadJobs(dir, job)
	if err != nil || len(dead) == 0 {
		return nil // nothing to add to "no live producer"
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(dead[0])
	}
	return errors.New(dead[0].message(dir))
}

// printDeadJobs follows status's list of live jobs with the dead ones.
func printDeadJobs(w io.Writer, dir string, dead []deadView) error {
	if len(dead) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nleft by dead producers in %s:\n", dir)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tPID\tFILES\tSIZE\tREMOVE WITH")
	for _, v := range dead {
		pid := "-"
		if v.PID != 0 {
			pid = fmt.Sprint(v.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", v.Job, pid, len(v.Files), units.Bytes(v.Bytes), v.Clean)
	}
	return tw.Flush()
}

// cleanCommand is the command that removes job's stale files in dir, with --dir unless
// dir is where clean looks by default here.
func cleanCommand(dir, job string) string {
	cmd := "shmloader clean " + job // job names need no quoting
	if filepath.Clean(dir) != filepath.Clean(shm.Dir("")) {
		cmd += " --dir " + shellQuote(dir)
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	safe := s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@%+=") == ""
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// count is "1 file", "3 files".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
