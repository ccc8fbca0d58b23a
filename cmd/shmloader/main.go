// Command shmloader serves Parquet data to the trainer processes of a host through
// shared-memory rings, and manages those rings.
package main

import (
	"fmt"
	"os"
)

var commands = []struct {
	name, summary string
	run           func(args []string) error
	hidden        bool
}{
	{name: "serve", summary: "serve a Parquet dataset to the trainers of this host", run: runServe},
	{name: "gen", summary: "write a synthetic Parquet dataset (demos, tests, benchmarks)", run: runGen},
	{name: "inspect", summary: "print a Parquet dataset's files, schema and totals", run: runInspect},
	{name: "cache", summary: "show (ls) or empty (clear) a serve cache directory", run: runCache},
	{name: "clean", summary: "remove shared-memory segments left by dead producers", run: runClean},
	{name: "version", summary: "print the version of shmloader and of its formats (ring, C ABI, plan, cache)", run: runVersion},
	{name: "debug-produce", summary: "serve a synthetic stream (transport tests and benchmarks)", run: runDebugProduce, hidden: true},
	{name: "debug-consume", summary: "read a synthetic stream and report latency and throughput", run: runDebugConsume, hidden: true},
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: shmloader COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(os.Stderr, "  %-14s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(os.Stderr, "\nRun 'shmloader COMMAND -h' for a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	if a := os.Args[1]; a == "-h" || a == "--help" || a == "help" {
		usage()
		return
	}
	if a := os.Args[1]; a == "--version" || a == "-version" {
		os.Args[1] = "version"
	}
	for _, c := range commands {
		if c.name == os.Args[1] {
			if err := c.run(os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "shmloader %s: %v\n", c.name, err)
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "shmloader: unknown command %q\n\n", os.Args[1])
	usage()
	os.Exit(2)
}
