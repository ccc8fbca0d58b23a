// Command shmloader serves Parquet data to the trainer processes of a host through
// shared-memory rings, and manages those rings.
//
// Streams: a command's result (inspect's report, serve --print-config, cache ls, help
// asked for) goes to stdout; everything else (serve's summary, status and per-rank
// lines, gen's progress, errors, usage after a usage error) goes to stderr, so that
// stdout stays free for whatever else a launch script runs.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
)

// A command's run writes its result to stdout and everything else to stderr. It returns
// flag.ErrHelp after printing help that was asked for (exit status 0), a usageError when
// it was called wrongly (exit status 2), an exitStatus for an outcome with a status of
// its own, and any other error when it failed (1).
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
	hidden        bool
}

var commands []command

func init() {
	commands = []command{
		{name: "serve", summary: "serve a Parquet dataset to the trainers of this host", run: runServe},
		{name: "gen", summary: "write a synthetic Parquet dataset (demos, tests, benchmarks)", run: runGen},
		{name: "inspect", summary: "print a Parquet dataset's files, schema and totals; --verify: read every page", run: inspectCommand},
		{name: "cache", summary: "show (ls) or empty (clear) a serve cache directory", run: runCache},
		{name: "status", summary: "show a running job (rings, waits, rates, cache), or list the live jobs and what dead ones left", run: runStatus},
		{name: "clean", summary: "remove the files dead producers left in shared memory (or list them: --dry-run)", run: runClean},
		{name: "version", summary: "print the version of shmloader and of its formats (ring, C ABI, plan, cache)", run: runVersion},
		{name: "help", summary: "show this list, or a command's flags (help COMMAND)", run: runHelp},
		{name: "debug-produce", summary: "serve a synthetic stream (transport tests and benchmarks)", run: runDebugProduce, hidden: true},
		{name: "debug-consume", summary: "read a synthetic stream and report latency and throughput", run: runDebugConsume, hidden: true},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: shmloader COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		if !c.hidden {
			fmt.Fprintf(w, "  %-14s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nRun 'shmloader COMMAND --help' (or 'shmloader help COMMAND') for a command's flags.\n")
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the whole command line; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	if name == "--version" || name == "-version" {
		name = "version"
	}
	if isHelp(name) {
		name, args = "help", append([]string{"help"}, args[1:]...)
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "shmloader: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	err := c.run(args[1:], stdout, stderr)
	var ue usageError
	var es exitStatus
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		if ue.err != nil {
			fmt.Fprintf(stderr, "shmloader %s: %v\n", name, ue.err)
		}
		return 2
	case errors.As(err, &es):
		return es.code
	}
	fmt.Fprintf(stderr, "shmloader %s: %v\n", name, err)
	if hint := dataset.Remedy(err); hint != "" {
		fmt.Fprintf(stderr, "shmloader %s: %s\n", name, hint)
	}
	return 1
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// runHelp is `shmloader help [COMMAND]`: the command list, or that command's usage, on
// stdout.
func runHelp(args []string, stdout, stderr io.Writer) error {
	switch len(args) {
	case 0:
		usage(stdout)
		return flag.ErrHelp
	case 1:
		if c := lookup(args[0]); c != nil && c.name != "help" {
			return c.run([]string{"-h"}, stdout, stderr)
		}
		if !isHelp(args[0]) {
			usage(stderr)
			return usageError{fmt.Errorf("unknown command %q", args[0])}
		}
		usage(stdout)
		return flag.ErrHelp
	}
	usage(stderr)
	return usageError{fmt.Errorf("want at most one COMMAND, got %q", args)}
}

// isHelp: the argument asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// usageError is a command called wrongly: a bad flag or operand, a missing required
// flag. main prints err (unless nil: the flag package printed it already) and exits 2.
type usageError struct{ err error }

func (e usageError) Error() string {
	if e.err == nil {
		return "bad usage"
	}
	return e.err.Error()
}

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitStatus ends a command with an exit status of its own (documented in its usage),
// for an outcome its output has already told: main prints nothing more.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// parseFlags parses a command's flags (fs must be flag.ContinueOnError). Help (-h,
// -help, --help, or "help" as the only argument) prints fs.Usage to stdout and returns
// flag.ErrHelp; a bad flag prints the flag package's complaint and fs.Usage to stderr
// and returns a usageError. Afterwards fs writes to stderr, so that fs.Usage() after a
// later usage error goes there too.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	var err error
	if len(args) == 1 && args[0] == "help" {
		fs.Usage()
		err = flag.ErrHelp
	} else {
		err = fs.Parse(args)
	}
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		stdout.Write(buf.Bytes())
		return flag.ErrHelp
	}
	// The flag package's complaint ("flag provided but not defined: -x") heads the usage.
	out := buf.Bytes()
	if msg := err.Error() + "\n"; bytes.HasPrefix(out, []byte(msg)) {
		out = append([]byte(dashFlag(err.Error())+"\n"), out[len(msg):]...)
	}
	stderr.Write(out)
	// Said again under the usage, which would otherwise scroll it away, with the flag
	// meant where a typo is plausible.
	fmt.Fprintf(stderr, "shmloader %s: %s%s (--help lists every flag)\n", fs.Name(), dashFlag(err.Error()), flagGuess(fs, err))
	return usageError{}
}

// flagGuess is " (did you mean --x?)" for a flag that is not defined but close to one
// that is.
func flagGuess(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best, ok := config.Closest(strings.TrimLeft(name, "-"), names); ok {
		return fmt.Sprintf(" (did you mean --%s?)", best)
	}
	return ""
}

// printFlags is fs.PrintDefaults with every flag spelled --name, as the README and the
// messages spell them (the flag package accepts both and prints -name). Every command's
// usage prints its flags through it, so a flag added anywhere gets the same spelling.
func printFlags(fs *flag.FlagSet) {
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	fs.PrintDefaults()
	fs.SetOutput(out)
	// A flag's line starts "  -name"; the lines of its usage start "    \t".
	out.Write(flagLine.ReplaceAll(buf.Bytes(), []byte("$1--")))
}

var flagLine = regexp.MustCompile(`(?m)^(  )-`)

// dashFlag spells the flag that one of the flag package's error messages names as --name.
func dashFlag(msg string) string {
	return flagError.ReplaceAllString(msg, "$1--")
}

var flagError = regexp.MustCompile(`^(flag provided but not defined: |flag needs an argument: |` +
	`invalid value "(?:[^"\\]|\\.)*" for flag |invalid boolean value "(?:[^"\\]|\\.)*" for |invalid boolean flag )-?`)

// parseInterspersed is parseFlags for a command whose flags may come before and after
// its operands (the flag package stops at the first operand); it returns the operands.
// After "--" everything is an operand.
func parseInterspersed(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, error) {
	var operands []string
	for {
		if err := parseFlags(fs, args, stdout, stderr); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, nil
		}
		if used := args[:len(args)-len(rest)]; len(used) > 0 && used[len(used)-1] == "--" {
			return append(operands, rest...), nil
		}
		operands, args = append(operands, rest[0]), rest[1:]
	}
}
