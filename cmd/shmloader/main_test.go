package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/consumer"
	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// The test binary is also the command: in the role mainRole (testkit.Command) it runs
// main, so the tests see real exit statuses and the real stdout and stderr of the
// process.
const mainRole = "main"

func TestMain(m *testing.M) {
	if role, _ := testkit.Role(); role == mainRole {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type outcome struct {
	code           int
	stdout, stderr string
}

// shmloader runs the command in dir ("" = this one) and returns what it did.
func shmloader(t *testing.T, dir string, timeout time.Duration, args ...string) outcome {
	t.Helper()
	o, err := runCommand(dir, timeout, args...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func runCommand(dir string, timeout time.Duration, args ...string) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := testkit.Command(ctx, mainRole, "", args...)
	cmd.Dir = dir
	// Under -race a process that exits 0 waits a second for late reports; not here.
	cmd.Env = append(cmd.Environ(), "GORACE=atexit_sleep_ms=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return outcome{}, fmt.Errorf("shmloader %q: %w", args, err)
	}
	if ctx.Err() != nil {
		return outcome{}, fmt.Errorf("shmloader %q still running after %v\nstderr: %s", args, timeout, stderr.String())
	}
	return outcome{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}, nil
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\nstdout: %q\nstderr: %q", o.code, o.stdout, o.stderr)
}

// TestHelp: help asked for, at the top level and of every command, goes to stdout with
// exit status 0 and nothing on stderr.
func TestHelp(t *testing.T) {
	top := [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}, {"help", "help"}}
	for _, args := range top {
		o := shmloader(t, "", time.Minute, args...)
		if o.code != 0 || !strings.Contains(o.stdout, "usage: shmloader COMMAND") || !strings.Contains(o.stdout, "serve") || o.stderr != "" {
			t.Errorf("shmloader %q: %v", args, o)
		}
	}
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		want := "usage: shmloader " + c.name
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {c.name, "-help"}, {c.name, "help"}, {"help", c.name}, {"--help", c.name}} {
			o := shmloader(t, "", time.Minute, args...)
			if o.code != 0 || !strings.Contains(o.stdout, want) || o.stderr != "" {
				t.Errorf("shmloader %q: %v", args, o)
			}
		}
	}
}

// TestHelpSpellsFlagsWithTwoDashes: every command's help (hidden ones too) spells every
// flag --name, as the README does, and lists the flags of those that have any.
func TestHelpSpellsFlagsWithTwoDashes(t *testing.T) {
	noFlags := map[string]bool{"help": true, "cache": true, "version": true}
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		o := shmloader(t, "", time.Minute, c.name, "-h")
		if o.code != 0 {
			t.Fatalf("%s -h: %v", c.name, o)
		}
		flags := 0
		for _, line := range strings.Split(o.stdout, "\n") {
			if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "-") {
				continue
			}
			if !strings.HasPrefix(strings.TrimLeft(line, " \t"), "--") {
				t.Errorf("%s -h: a flag spelled with one dash: %q", c.name, line)
			}
			if strings.HasPrefix(line, "  --") {
				flags++
			}
		}
		if flags == 0 && !noFlags[c.name] {
			t.Errorf("%s -h lists no flags:\n%s", c.name, o.stdout)
		}
	}
}

// TestPrintFlags: printFlags prints what flag.PrintDefaults does, every flag's type,
// default and description, with the flag's name spelled --name, for flags of every kind.
func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("config", "", "YAML `FILE`")
	fs.String("log-format", "human", "logs as \"human\" lines")
	fs.Bool("quiet", false, "no output")
	fs.Bool("cache", true, "use the cache")
	fs.Int("workers", 0, "decode workers,\n0 = one per core")
	fs.Duration("drain-timeout", 5*time.Second, "how long to wait")
	fs.Func("ranks", "rings on this node", func(string) error { return nil })
	fs.Uint64("x", 7, "a one-letter flag")
	var want, got bytes.Buffer
	fs.SetOutput(&want)
	fs.PrintDefaults()
	fs.SetOutput(&got)
	printFlags(fs)
	wl, gl := strings.Split(want.String(), "\n"), strings.Split(got.String(), "\n")
	if len(wl) != len(gl) {
		t.Fatalf("printFlags:\n%s\nPrintDefaults:\n%s", got.String(), want.String())
	}
	flags := 0
	for i := range wl {
		switch {
		case strings.HasPrefix(wl[i], "  -"):
			flags++
			if gl[i] != "  -"+wl[i][2:] {
				t.Errorf("flag line %q, want %q", gl[i], "  -"+wl[i][2:])
			}
		case gl[i] != wl[i]:
			t.Errorf("line %q, want %q", gl[i], wl[i])
		}
	}
	if flags != 8 {
		t.Errorf("%d flag lines, want 8:\n%s", flags, got.String())
	}
}

// TestUsageErrors: a command called wrongly says so on stderr, with the usage, and exits
// 2; stdout stays empty.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string // on stderr
	}{
		{nil, "usage: shmloader COMMAND"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"help", "bogus"}, `unknown command "bogus"`},
		{[]string{"serve"}, "a config is required: shmloader serve CONFIG, or --config CONFIG"},
		{[]string{"serve", "--bogus"}, "flag provided but not defined: --bogus"},
		{[]string{"serve", "c.yaml", "--bogus"}, "flag provided but not defined: --bogus"},
		{[]string{"serve", "--config", "c.yaml", "d.yaml"}, "the config is given twice, as --config c.yaml and as the operand d.yaml: give one"},
		{[]string{"serve", "d.yaml", "--config", "c.yaml"}, "the config is given twice, as --config c.yaml and as the operand d.yaml: give one"},
		{[]string{"serve", "c.yaml", "d.yaml"}, `want one CONFIG, got ["c.yaml" "d.yaml"]`},
		{[]string{"serve", "--", "c.yaml", "--ranks"}, `want one CONFIG, got ["c.yaml" "--ranks"]`},
		{[]string{"gen"}, "--out is required"},
		{[]string{"gen", "--rows"}, "flag needs an argument: --rows"},
		{[]string{"inspect"}, "want one DATASET, got 0"},
		{[]string{"inspect", "a", "help"}, "want one DATASET, got 2"},
		{[]string{"cache"}, "want a subcommand"},
		{[]string{"cache", "rm", "dir"}, `unknown subcommand "rm"`},
		{[]string{"clean", "a/b"}, `invalid job name "a/b"`},
		{[]string{"debug-produce"}, "--job NAME is required"},
		{[]string{"debug-consume", "--rank", "x"}, `invalid value "x" for flag --rank`},
		{[]string{"clean", "-dir"}, "flag needs an argument: --dir"},
		{[]string{"status", "--once=maybe"}, `invalid boolean value "maybe" for --once`},
		// Said again last, under the usage, with the flag meant.
		{[]string{"serve", "c.yaml", "--batch-sise", "4"}, "\nshmloader serve: flag provided but not defined: --batch-sise (did you mean --batch-size?) (--help lists every flag)\n"},
		{[]string{"clean", "--dryrun"}, "(did you mean --dry-run?)"},
	}
	for _, c := range cases {
		o := shmloader(t, "", time.Minute, c.args...)
		if o.code != 2 || !strings.Contains(o.stderr, c.want) || !strings.Contains(o.stderr, "usage: shmloader") || o.stdout != "" {
			t.Errorf("shmloader %q: want exit 2 and %q on stderr; got %v", c.args, c.want, o)
		}
	}
}

// TestPrintConfigServesEveryRow: the printed config keeps every row (no filter), and
// given a dataset path it serves all of them; serve writes nothing to stdout, its
// summary and per-rank lines go to stderr. The config is the operand here, with flags
// after it.
func TestPrintConfigServesEveryRow(t *testing.T) {
	o := shmloader(t, "", time.Minute, "serve", "--print-config")
	if o.code != 0 || o.stderr != "" {
		t.Fatalf("serve --print-config: %v", o)
	}
	cfg, err := config.Parse([]byte(o.stdout), "printed")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Filter) != 0 {
		t.Fatalf("the printed config filters rows: %+v", cfg.Filter)
	}

	// The default columns of gen, which the printed outputs name; 4 row groups of one
	// batch each, so that drop_last drops nothing.
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	const rows = 4096
	if err := genCommand(context.Background(), []string{"--out", data, "--rows", fmt.Sprint(rows), "--files", "2",
		"--row-group-rows", "1024", "--quiet"}, os.Stderr, os.Stderr); err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^dataset: .*$`).ReplaceAllString(o.stdout, "dataset: "+data)
	if text == o.stdout {
		t.Fatal("the printed config has no dataset line")
	}
	path := filepath.Join(tmp, "train.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	shmDir := segmentDir(t)
	job := fmt.Sprintf("cli-%d", os.Getpid())

	type result struct {
		o   outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := runCommand("", 2*time.Minute, "serve", path, "--dir", shmDir, "--job", job, "--progress", "100ms")
		done <- result{o, err}
	}()
	c, err := consumer.Attach(job, 0, consumer.Options{Dir: shmDir, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	seen, n := make([]int, rows), 0
	for {
		b, err := c.Next(time.Minute)
		if errors.Is(err, consumer.ErrEndOfEpoch) {
			continue
		}
		if errors.Is(err, consumer.ErrEndOfStream) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids, ok := b.Tensor("ids")
		if !ok {
			t.Fatal("no ids tensor")
		}
		for _, id := range ids.Int64s() {
			seen[id]++
			n++
		}
		c.Release(b)
	}
	c.Close()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if o = r.o; o.code != 0 {
		t.Fatalf("serve: %v", o)
	}
	if n != rows {
		t.Errorf("served %d rows of %d", n, rows)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("id %d served %d times", id, k)
		}
	}
	if o.stdout != "" {
		t.Errorf("serve wrote to stdout: %q", o.stdout)
	}
	for _, want := range []string{"serve: epoch: 4 global batches", "rank=0 batches=4 rows=4096\n", "serve: done in"} {
		if !strings.Contains(o.stderr, want) {
			t.Errorf("serve's stderr lacks %q:\n%s", want, o.stderr)
		}
	}
}

// TestRelativeDatasetNotFound: a relative dataset that matches nothing names the
// directory it was resolved against and the absolute path tried, from a flag and from a
// config file in another directory.
func TestRelativeDatasetNotFound(t *testing.T) {
	run := t.TempDir()
	cfgDir := filepath.Join(t.TempDir(), "configs")
	if err := os.MkdirAll(filepath.Join(cfgDir, "data", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfgDir, "train.yaml")
	if err := os.WriteFile(path, []byte("dataset: data/x\noutputs: {id: id}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shmDir := segmentDir(t)

	o := shmloader(t, run, time.Minute, "serve", "--config", path, "--dir", shmDir, "--dataset", "data/x/*.parquet")
	want := fmt.Sprintf("open data/x/*.parquet: no Parquet files match (relative to the current directory %s: %s)",
		run, filepath.Join(run, "data/x/*.parquet"))
	if o.code != 1 || !strings.Contains(o.stderr, want) || o.stdout != "" {
		t.Errorf("--dataset: want exit 1 and %q; got %v", want, o)
	}

	// The config as --config FILE and as the operand: the same file, the same error.
	for _, args := range [][]string{{"serve", "--config", path, "--dir", shmDir}, {"serve", path, "--dir", shmDir}} {
		o = shmloader(t, run, time.Minute, args...)
		for _, want := range []string{
			path + ":1: dataset: open data/x: no such file or directory",
			fmt.Sprintf("(relative to the current directory %s: %s)", run, filepath.Join(run, "data/x")),
			"not to the config file's directory " + cfgDir,
			filepath.Join(cfgDir, "data/x") + " exists",
		} {
			if o.code != 1 || !strings.Contains(o.stderr, want) {
				t.Errorf("dataset in the config (%q): want exit 1 and %q; got %v", args, want, o)
			}
		}
	}
}

// segmentDir is a fresh directory for ring segments, in /dev/shm where there is one.
func segmentDir(t *testing.T) string {
	base := "/dev/shm"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		base = ""
	}
	dir, err := os.MkdirTemp(base, "shmloader-cli-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
