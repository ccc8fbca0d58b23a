package main

import (
	"fmt"
	"os"

	"github.com/shmloader/shmloader/cache"
)

const cacheUsage = `usage: shmloader cache ls DIR
       shmloader cache clear DIR

ls     shows what the serve cache in DIR holds: its size, entries, the configs they
       were made for (with sample row groups), its shards, and anything it would
       drop (entries of another format, files left by killed writers).
clear  empties DIR. It refuses while a shmloader serve has the cache open (it names
       the process), and a clear that is interrupted leaves a cache serve accepts.
`

func runCache(args []string) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Print(cacheUsage)
		return nil
	}
	if len(args) != 2 {
		fmt.Fprint(os.Stderr, cacheUsage)
		return fmt.Errorf("want a subcommand (ls or clear) and a cache directory")
	}
	dir := args[1]
	switch args[0] {
	case "ls":
		l, err := cache.List(dir)
		if err != nil {
			return err
		}
		_, err = l.WriteTo(os.Stdout)
		return err
	case "clear":
		if err := cache.Clear(dir); err != nil {
			return err
		}
		fmt.Printf("cache %s: cleared\n", dir)
		return nil
	}
	fmt.Fprint(os.Stderr, cacheUsage)
	return fmt.Errorf("unknown subcommand %q (want ls or clear)", args[0])
}
