package main

import (
	"flag"
	"fmt"

	"github.com/shmloader/shmloader/shm"
)

func runClean(args []string) error {
	fs := flag.NewFlagSet("clean", flag.ExitOnError)
	dir := fs.String("dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader clean [--dir DIR]\n\n"+
			"Removes this user's segments and lock files whose producer is dead.\n"+
			"A live producer's files are never touched.\n\n")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	removed, err := shm.Clean(*dir)
	for _, p := range removed {
		fmt.Printf("removed %s\n", p)
	}
	if err == nil {
		fmt.Printf("clean: %d stale file(s) removed from %s\n", len(removed), shm.Dir(*dir))
	}
	return err
}
