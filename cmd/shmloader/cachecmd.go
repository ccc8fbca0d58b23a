package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

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

func runCache(args []string, stdout, stderr io.Writer) error {
	if slices.ContainsFunc(args, isHelp) {
		fmt.Fprint(stdout, cacheUsage)
		return flag.ErrHelp
	}
	if len(args) != 2 {
		fmt.Fprint(stderr, cacheUsage)
		return usageErrorf("want a subcommand (ls or clear) and a cache directory")
	}
	dir := args[1]
	switch args[0] {
	case "ls":
		l, err := cache.List(dir)
		if err != nil {
			return err
		}
		_, err = l.WriteTo(stdout)
		return err
	case "clear":
		if err := cache.Clear(dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "cache %s: cleared\n", dir)
		return nil
	}
	fmt.Fprint(stderr, cacheUsage)
	return usageErrorf("unknown subcommand %q (want ls or clear)", args[0])
}
