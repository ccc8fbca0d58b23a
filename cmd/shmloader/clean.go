package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/shmloader/shmloader/shm"
)

func runClean(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clean", flag.ContinueOnError)
	dir := fs.String("dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader clean [--dir DIR]\n\n"+
			"Removes this user's segments and lock files whose producer is dead.\n"+
			"A live producer's files are never touched.\n\n")
		printFlags(fs)
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	removed, err := shm.Clean(*dir)
	for _, p := range removed {
		fmt.Fprintf(stdout, "removed %s\n", p)
	}
	if err == nil {
		fmt.Fprintf(stdout, "clean: %d stale file(s) removed from %s\n", len(removed), shm.Dir(*dir))
	}
	return err
}
