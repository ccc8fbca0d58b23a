package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestGenAndInspect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var log bytes.Buffer
	err := genCommand(context.Background(), []string{"--out", dir, "--rows", "3000", "--files", "2",
		"--row-group-rows", "500", "--features", "4", "--categoricals", "2", "--strings", "1", "--compression", "zstd"}, &log, &log)
	if err != nil {
		t.Fatalf("gen: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "gen: wrote 3000 rows in 2 files") {
		t.Errorf("gen summary missing: %q", log.String())
	}

	var out bytes.Buffer
	if err := inspectCommand([]string{dir, "--row-groups"}, &out, &log); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`part-00000\.parquet +1500 +3 +[0-9.]+ KiB +ZSTD`),
		regexp.MustCompile(`(?m)^  f003 +float32 +no$`),
		regexp.MustCompile(`(?m)^  f000 +float32 +yes$`),
		regexp.MustCompile(`(?m)^  s00 +utf8 +yes$`),
		regexp.MustCompile(`(?m)^  seq +list<element: int64> +yes$`),
		regexp.MustCompile(`(?m)^  rows: +3000$`),
		regexp.MustCompile(`(?m)^  row groups: +6$`),
		regexp.MustCompile(`(?m)^ +5 +\S+part-00001\.parquet +2 +500 `), // the last row group
	} {
		if !want.MatchString(report) {
			t.Errorf("inspect output lacks %s:\n%s", want, report)
		}
	}
}

func TestGenInspectUsage(t *testing.T) {
	var out, log bytes.Buffer
	if err := genCommand(context.Background(), []string{"-h"}, &out, &log); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(out.String(), "usage: shmloader gen") || log.Len() > 0 {
		t.Errorf("gen -h: %v, stdout %q, stderr %q", err, out.String(), log.String())
	}
	out.Reset()
	if err := inspectCommand([]string{"--help"}, &out, &log); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(out.String(), "usage: shmloader inspect") || log.Len() > 0 {
		t.Errorf("inspect --help: %v, stdout %q, stderr %q", err, out.String(), log.String())
	}
	for _, args := range [][]string{{}, {"--rows", "10"}, {"--out", t.TempDir(), "--bogus"}, {"--out", t.TempDir(), "--compression", "lzo"}} {
		if err := genCommand(context.Background(), args, &log, &log); err == nil {
			t.Errorf("gen %q: no error", args)
		}
	}
	for _, args := range [][]string{{}, {"a", "b"}, {filepath.Join(t.TempDir(), "none")}} {
		if err := inspectCommand(args, &log, &log); err == nil {
			t.Errorf("inspect %q: no error", args)
		}
	}
}
