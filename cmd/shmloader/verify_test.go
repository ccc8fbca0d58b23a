package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/dataset/pqdamage"
	"github.com/shmloader/shmloader/producer/gen"
)

// verifyDataset writes a small gen dataset to dir: 2 files of 2,000 rows in row groups
// of 1,000; features f000..f005 (one page per chunk), categoricals c00..c02 (a
// dictionary page, then data pages), s00 and seq.
func verifyDataset(t *testing.T, dir string) string {
	t.Helper()
	if err := gen.Write(context.Background(), gen.Config{Out: dir, Rows: 4000, Files: 2, RowGroupRows: 1000,
		Compression: "snappy", Features: 6, Categoricals: 3, Strings: 1, ListMax: 4, NullFraction: 0.1, Seed: 5}, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// damagePage damages page of column in row group rg of file and returns how a report
// names it.
func damagePage(t *testing.T, file string, rg int, column string, page int, part pqdamage.Part) string {
	t.Helper()
	w, err := pqdamage.Page(file, rg, column, page, part)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s: row group %d: column %q: page %d (chunk offset %d): ", file, rg, column, page, w.Offset-w.ChunkStart)
}

var tookRE = regexp.MustCompile(` in [0-9.]+ s:`)

// Two files, each with a damaged page in another column: both are reported on stdout,
// naming file, row group, column and page, then the summary and what to do, once; exit
// status 1 and one line on stderr. 1 worker and 4 print the same report.
func TestInspectVerifyReportsEveryDamagedFile(t *testing.T) {
	dir := verifyDataset(t, filepath.Join(t.TempDir(), "data"))
	want := []string{
		damagePage(t, filepath.Join(dir, "part-00000.parquet"), 1, "f001", 0, pqdamage.Header),
		damagePage(t, filepath.Join(dir, "part-00001.parquet"), 0, "c01", 0, pqdamage.Body),
	}
	var reports []string
	for _, workers := range []string{"1", "4"} {
		o := shmloader(t, "", time.Minute, "inspect", "--verify", "--workers", workers, dir)
		if o.code != 1 {
			t.Fatalf("--workers %s: %v", workers, o)
		}
		lines := strings.Split(o.stdout, "\n")
		var damaged []string
		for _, l := range lines {
			if strings.HasPrefix(l, "  ") {
				damaged = append(damaged, strings.TrimPrefix(l, "  "))
			}
		}
		if len(damaged) != 2 || !strings.HasPrefix(damaged[0], want[0]) || !strings.HasPrefix(damaged[1], want[1]) {
			t.Errorf("--workers %s: damaged chunks:\n%s\nwant lines starting\n%s", workers, strings.Join(damaged, "\n"), strings.Join(want, "\n"))
		}
		if !regexp.MustCompile(`(?m)^checked 4 row groups, 52 column chunks, \d+ pages, .* \(\d+ bytes\) in [0-9.]+ s: 2 damaged column chunks, in 2 files$`).MatchString(o.stdout) {
			t.Errorf("--workers %s: no summary:\n%s", workers, o.stdout)
		}
		if n := strings.Count(o.stdout, "what to do: "+dataset.Remedy(dataset.ErrCorrupt)); n != 1 {
			t.Errorf("--workers %s: what to do, %d times:\n%s", workers, n, o.stdout)
		}
		if o.stderr != "shmloader inspect: 2 damaged column chunks, in 2 files (listed on stdout)\n" {
			t.Errorf("--workers %s: stderr %q", workers, o.stderr)
		}
		reports = append(reports, tookRE.ReplaceAllString(o.stdout, " in - s:"))
	}
	if reports[0] != reports[1] {
		t.Errorf("the report differs with 1 worker and 4:\n%s\n%s", reports[0], reports[1])
	}
}

// A clean dataset exits 0; --quiet leaves stderr empty, and progress, without a
// terminal, is plain lines on stderr.
func TestInspectVerifyCleanDataset(t *testing.T) {
	dir := verifyDataset(t, filepath.Join(t.TempDir(), "data"))
	o := shmloader(t, "", time.Minute, "inspect", "--verify", "--quiet", dir)
	if o.code != 0 || o.stderr != "" || !regexp.MustCompile(`(?m)^checked 4 row groups, 52 column chunks, .*: nothing damaged$`).MatchString(o.stdout) {
		t.Errorf("clean dataset: %v", o)
	}
	defer func(d map[bool]time.Duration) { verifyEvery = d }(verifyEvery)
	verifyEvery = map[bool]time.Duration{false: time.Microsecond}
	var out, log bytes.Buffer
	if err := inspectCommand([]string{"--verify", dir}, &out, &log); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	progress := regexp.MustCompile(`^inspect --verify: [0-4]/4 row groups, [0-9.]+ (?:[KMGT]iB|B), [0-9.]+ (?:[KMGT]iB|B)/s, ETA [-0-9.a-zµ]+$`)
	for _, l := range lines {
		if !progress.MatchString(l) {
			t.Errorf("progress line %q", l)
		}
	}
	if strings.Contains(out.String(), "inspect --verify:") {
		t.Errorf("progress on stdout:\n%s", out.String())
	}
}

// With --config only the columns its outputs and filter read are checked: damage in a
// column it does not use is not reported (and its bytes are not among those checked);
// damage in a column only its filter reads is. A DATASET given replaces the config's.
func TestInspectVerifyWithConfig(t *testing.T) {
	root := t.TempDir()
	dir := verifyDataset(t, filepath.Join(root, "data"))
	clean := verifyDataset(t, filepath.Join(root, "clean"))
	want := []string{
		damagePage(t, filepath.Join(dir, "part-00000.parquet"), 0, "f001", 0, pqdamage.Body),
		damagePage(t, filepath.Join(dir, "part-00001.parquet"), 1, "c02", 1, pqdamage.Header),
	}
	damagePage(t, filepath.Join(dir, "part-00000.parquet"), 1, "f005", 0, pqdamage.Header)
	damagePage(t, filepath.Join(dir, "part-00001.parquet"), 0, "s00", 0, pqdamage.Body)
	cfg := filepath.Join(root, "train.yaml")
	os.WriteFile(cfg, fmt.Appendf(nil, `dataset: %s
outputs:
  x: {columns: [f000..f003], transforms: [{fill_null: 0}]}
  id: id
filter: [{column: c02, op: ">=", value: 0}]
`, dir), 0o644)
	o := shmloader(t, "", time.Minute, "inspect", "--verify", "--config", cfg)
	if o.code != 1 || !strings.Contains(o.stdout, "columns: 6, those "+cfg+" reads") {
		t.Fatalf("%v", o)
	}
	for i, w := range want {
		if !strings.Contains(o.stdout, "\n  "+w) {
			t.Errorf("damaged chunk %d not reported: %s\n%s", i, w, o.stdout)
		}
	}
	if strings.Contains(o.stdout, `"f005"`) || strings.Contains(o.stdout, `"s00"`) || strings.Count(o.stdout, "\n  ") != 2 {
		t.Errorf("a column the config does not read is reported:\n%s", o.stdout)
	}
	ds, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, rg := range ds.RowGroups {
		meta, _ := rg.File.Footer()
		for _, c := range []string{"id", "f000", "f001", "f002", "f003", "c02"} {
			l, _ := rg.File.Leaf(c)
			size += meta.RowGroups[rg.Index].Columns[l.Index].MetaData.TotalCompressedSize
		}
	}
	m := regexp.MustCompile(`checked 4 row groups, 24 column chunks, \d+ pages, .* \((\d+) bytes\)`).FindStringSubmatch(o.stdout)
	if got, _ := strconv.ParseInt(m[1], 10, 64); m == nil || got != size {
		t.Errorf("bytes checked: %v, the config's columns have %d:\n%s", m, size, o.stdout)
	}
	o = shmloader(t, "", time.Minute, "inspect", "--config", cfg, "--verify", clean)
	if o.code != 0 || !strings.HasPrefix(o.stdout, "dataset: "+clean+" ") {
		t.Errorf("DATASET given with --config: %v", o)
	}
}

func TestInspectVerifyUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "--verify"}, "want one DATASET, got 0"},
		{[]string{"inspect", "--verify", "a", "b"}, "want one DATASET, got 2"},
		{[]string{"inspect", "--verify", "--config", "c.yaml", "a", "b"}, "want one DATASET, got 2"},
		{[]string{"inspect", "--config", "c.yaml", "a"}, "--config, --workers and --quiet go with --verify"},
		{[]string{"inspect", "a", "--workers", "2"}, "--config, --workers and --quiet go with --verify"},
		{[]string{"inspect", "--verify", "--row-groups", "a"}, "give one"},
		{[]string{"inspect", "--verify", "--workers", "-1", "a"}, "--workers must be >= 0"},
	} {
		o := shmloader(t, "", time.Minute, c.args...)
		if o.code != 2 || !strings.Contains(o.stderr, c.want) || o.stdout != "" {
			t.Errorf("shmloader %q: %v", c.args, o)
		}
	}
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		bar     bool
		damaged int64
		want    string
	}{
		{false, 0, "inspect --verify: 16/64 row groups, 100.0 MiB, 50.0 MiB/s, ETA 6s"},
		{true, 0, "verify [######..................] 16/64 row groups  100.0 MiB  50.0 MiB/s  ETA 6s"},
		{false, 2, "inspect --verify: 16/64 row groups, 100.0 MiB, 50.0 MiB/s, ETA 6s, 2 damaged"},
		{true, 2, "verify [######..................] 16/64 row groups  100.0 MiB  50.0 MiB/s  ETA 6s  2 damaged"},
	} {
		if got := progressLine(c.bar, 16, 64, 100<<20, 250, 1000, c.damaged, 2*time.Second); got != c.want {
			t.Errorf("progressLine(bar %v, %d damaged) = %q, want %q", c.bar, c.damaged, got, c.want)
		}
	}
}
