package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/serve"
)

// verifyCommand is `shmloader inspect --verify`: the report goes to out, progress to
// log. dsPath ("" with a config: the config's dataset) overrides the config's dataset.
func verifyCommand(dsPath, cfgPath string, workers int, quiet bool, out, log io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process at once
	}()
	var v *serve.Verifier
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			return err
		}
		if dsPath != "" {
			cfg.Dataset = dsPath // as given, not read as YAML
			delete(cfg.Lines, "dataset")
		}
		if v, err = serve.VerifyConfig(cfg); err != nil {
			return err
		}
	} else {
		ds, err := dataset.Open(dsPath)
		if err != nil {
			return err
		}
		if v, err = serve.NewVerifier(ds, nil); err != nil {
			return err
		}
	}
	ds := v.Dataset()
	var total int64
	for _, rg := range ds.RowGroups {
		total += rg.CompressedBytes
	}
	fmt.Fprintf(out, "dataset: %s (%d files, %d row groups, %s)\n", ds.Pattern, len(ds.Files), len(ds.RowGroups), units.Bytes(total))
	if cfgPath != "" {
		fmt.Fprintf(out, "columns: %d, those %s reads, as serve reads them\n", len(v.Columns()), cfgPath)
	} else {
		fmt.Fprintf(out, "columns: all %d, each by every road serve may read it by\n", len(v.Columns()))
	}

	var p serve.VerifyProgress
	start := time.Now()
	done := func() {}
	if !quiet {
		done = startVerifyProgress(log, &p, len(ds.RowGroups), total, start)
	}
	rep, err := v.Run(ctx, workers, &p)
	done()
	took := time.Since(start)
	if err != nil && ctx.Err() == nil {
		return err
	}
	return printVerify(out, rep, len(ds.RowGroups), took, ctx.Err() != nil)
}

// printVerify writes the damaged chunks, the summary and what to do, and returns the
// command's error: nil when everything was checked and nothing is damaged.
func printVerify(out io.Writer, rep *serve.VerifyReport, rowGroups int, took time.Duration, stopped bool) error {
	files := map[string]bool{}
	var remedies []string
	if len(rep.Damaged) > 0 {
		fmt.Fprintf(out, "\ndamaged:\n")
	}
	for _, e := range rep.Damaged {
		files[e.Path] = true
		line := e.Path
		if e.RowGroup >= 0 {
			line += fmt.Sprintf(": row group %d", e.RowGroup)
		}
		if e.Column != "" {
			line += fmt.Sprintf(": column %q", e.Column)
		}
		fmt.Fprintf(out, "  %s: %v\n", line, e.Err)
		if r := dataset.Remedy(e); r != "" && !contains(remedies, r) {
			remedies = append(remedies, r)
		}
	}
	rgs := fmt.Sprintf("%d row groups", rep.RowGroups)
	if rep.RowGroups != rowGroups {
		rgs = fmt.Sprintf("%d of %d row groups", rep.RowGroups, rowGroups)
	}
	checked := fmt.Sprintf("checked %s, %d column chunks, %d pages, %s (%d bytes) in %.1f s",
		rgs, rep.Chunks, rep.Pages, units.Bytes(rep.Bytes), rep.Bytes, took.Seconds())
	if stopped {
		checked = "stopped by a signal: " + checked
	}
	found := "nothing damaged"
	if rep.Uncovered > 0 {
		found = fmt.Sprintf("nothing damaged that a check can see (%d of %d pages carry no CRC)", rep.Uncovered, rep.Pages)
	}
	if n := len(rep.Damaged); n > 0 {
		found = fmt.Sprintf("%d damaged %s, in %d %s", n, plural(n, "column chunk", "column chunks"), len(files), plural(len(files), "file", "files"))
	}
	fmt.Fprintf(out, "\n%s: %s\n", checked, found)
	if rep.Uncovered > 0 {
		fmt.Fprintf(out, "note: a page with no CRC (no page CRC, no chunk checksum in the footer) whose values were\n"+
			"overwritten still decodes, to other values, and no reader can tell; writers can add page\n"+
			"CRCs (pyarrow: write_page_checksum=True; `shmloader gen` files carry chunk checksums)\n")
	}
	for _, r := range remedies {
		fmt.Fprintf(out, "what to do: %s\n", r)
	}
	switch {
	case stopped:
		return fmt.Errorf("stopped by a signal after %d of %d row groups, the rest not checked: %s in those", rep.RowGroups, rowGroups, found)
	case len(rep.Damaged) > 0:
		return errors.New(found + " (listed on stdout)")
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// verifyEvery is how often progress is shown: on a terminal the bar is redrawn, else a
// line is written.
var verifyEvery = map[bool]time.Duration{true: 200 * time.Millisecond, false: 5 * time.Second}

// startVerifyProgress shows p on log until the returned function is called: a bar
// redrawn in place when log is a terminal, else a line every few seconds.
func startVerifyProgress(log io.Writer, p *serve.VerifyProgress, rowGroups int, total int64, start time.Time) (stop func()) {
	tty := isTerminal(log)
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(verifyEvery[tty])
		defer t.Stop()
		for {
			select {
			case <-quit:
				if tty {
					fmt.Fprint(log, "\r\x1b[K")
				}
				return
			case <-t.C:
				line := progressLine(tty, p.RowGroups.Load(), rowGroups, p.Bytes.Load(), p.Share.Load(), total, p.Damaged.Load(), time.Since(start))
				if tty {
					fmt.Fprintf(log, "\r%s\x1b[K", line)
				} else {
					fmt.Fprintln(log, line)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// progressLine says how far a verification is: row groups done of all, bytes checked,
// their rate, the time left (estimated from the share of the dataset's bytes done) and
// the damaged chunks found so far, if any.
func progressLine(bar bool, done int64, rowGroups int, bytes, share, total, damaged int64, elapsed time.Duration) string {
	frac := 0.0
	if total > 0 {
		frac = min(1, float64(share)/float64(total))
	}
	eta := "ETA -"
	if frac > 0 {
		eta = "ETA " + time.Duration(float64(elapsed)*(1-frac)/frac).Round(time.Second).String()
	}
	rate := units.Bytes(int64(float64(bytes)/max(elapsed.Seconds(), 1e-3))) + "/s"
	found := ""
	if damaged > 0 {
		found = fmt.Sprintf(", %d damaged", damaged)
	}
	if !bar {
		return fmt.Sprintf("inspect --verify: %d/%d row groups, %s, %s, %s%s", done, rowGroups, units.Bytes(bytes), rate, eta, found)
	}
	const width = 24
	n := int(frac * width)
	return fmt.Sprintf("verify [%s%s] %d/%d row groups  %s  %s  %s%s",
		strings.Repeat("#", n), strings.Repeat(".", width-n), done, rowGroups, units.Bytes(bytes), rate, eta, strings.ReplaceAll(found, ",", " "))
}
