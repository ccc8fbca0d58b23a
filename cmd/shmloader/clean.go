package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/shm"
)

// exitLiveJob is clean's exit status when a JOB it was given is served by a live producer.
const exitLiveJob = 3

func runClean(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clean", flag.ContinueOnError)
	dir := fs.String("dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	dryRun := fs.Bool("dry-run", false, "list what would be removed, with sizes, and remove nothing")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader clean [JOB...] [--dry-run] [--dir DIR]\n\n"+
			"Removes the files this user's dead producers left in the segment directory: ring\n"+
			"segments (shmloader-<uid>-<job>-r<rank>), the job's lock and status file, and\n"+
			"half-written status files. With JOBs, only those jobs' files; without, every dead\n"+
			"job's. A producer is alive while it holds its kernel lock (never judged by pid): a\n"+
			"live producer's files are never touched, and a JOB it serves is reported with its pid.\n\n"+
			"Exit status: 0 done (a JOB with nothing left is done too); 1 a file could not be\n"+
			"removed, or the directory read; 2 bad usage, an invalid JOB name included; %d a JOB is\n"+
			"served by a live producer and was left alone (the other JOBs were cleaned).\n\n", exitLiveJob)
		printFlags(fs)
	}
	jobs, err := parseInterspersed(fs, args, stdout, stderr) // flags before or after the JOBs
	if err != nil {
		return err
	}
	for _, job := range jobs {
		if err := shm.ValidateJob(job); err != nil {
			fs.Usage()
			return usageError{err}
		}
	}
	d := shm.Dir(*dir)
	left, err := shm.CleanJobs(d, shm.CleanOptions{Jobs: jobs, DryRun: *dryRun})
	verb := "removed"
	if *dryRun {
		verb = "would remove"
	}
	var files int
	var bytes int64
	live := false
	for _, l := range left {
		for _, f := range l.Files {
			fmt.Fprintf(stdout, "%s %s (%s)\n", verb, f.Path, units.Bytes(f.Size))
		}
		files, bytes = files+len(l.Files), bytes+l.Bytes()
		switch {
		case l.Live:
			pid := ""
			if l.PID != 0 {
				pid = fmt.Sprintf(" (pid %d)", l.PID)
			}
			fmt.Fprintf(stdout, "job %q: served by a live producer%s: left alone\n", l.Job, pid)
			live = live || len(jobs) > 0
		case len(l.Files) == 0 && len(jobs) > 0:
			fmt.Fprintf(stdout, "job %q: nothing left in %s\n", l.Job, d)
		}
	}
	if err != nil {
		return err
	}
	if *dryRun {
		fmt.Fprintf(stdout, "clean: %d stale file(s) (%s) would be removed from %s; --dry-run removed nothing\n",
			files, units.Bytes(bytes), d)
	} else {
		fmt.Fprintf(stdout, "clean: %d stale file(s) (%s) removed from %s\n", files, units.Bytes(bytes), d)
	}
	if live {
		return exitStatus{exitLiveJob}
	}
	return nil
}
