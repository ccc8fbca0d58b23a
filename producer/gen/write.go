package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/shmloader/shmloader/internal/units"
)

// FileName is the name of file i of a dataset.
func FileName(i int) string { return fmt.Sprintf("part-%05d.parquet", i) }

// Write generates the dataset cfg describes into cfg.Out, one goroutine per file up to
// GOMAXPROCS. It reports progress to progress (nil: nowhere) at most once a second and
// ends with a summary line. On error or cancellation no partial file is left behind.
func Write(ctx context.Context, cfg Config, progress io.Writer) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	if progress == nil {
		progress = io.Discard
	}
	if err := prepareDir(cfg.Out, cfg.Overwrite); err != nil {
		return err
	}
	start := time.Now()
	p := startProgress(progress, cfg.Rows, start)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	schema := Schema(cfg)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), cfg.Files); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBatcher(cfg, schema)
			for i := range next {
				lo, hi := fileRows(cfg, i)
				if err := writeFile(ctx, cfg, b, filepath.Join(cfg.Out, FileName(i)), lo, hi, p); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := 0; i < cfg.Files; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	p.stop()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if cfg.Overwrite {
		if err := removeStale(cfg.Out, cfg.Files); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "gen: wrote %d rows in %d files (%s) to %s in %.1f s\n",
		cfg.Rows, cfg.Files, units.Bytes(p.bytes.Load()), cfg.Out, time.Since(start).Seconds())
	return nil
}

// fileRows is the id range of file i: the rows split evenly, the first files one longer.
func fileRows(cfg Config, i int) (lo, hi int64) {
	per, extra := cfg.Rows/int64(cfg.Files), cfg.Rows%int64(cfg.Files)
	lo = int64(i)*per + min(int64(i), extra)
	hi = lo + per
	if int64(i) < extra {
		hi++
	}
	return lo, hi
}

// prepareDir creates dir, and refuses a non-empty one unless overwrite.
func prepareDir(dir string, overwrite bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 && !overwrite {
		return fmt.Errorf("%s is not empty (%d entries, e.g. %s); choose another directory or overwrite (--overwrite)", dir, len(ents), ents[0].Name())
	}
	return nil
}

// removeStale deletes the *.parquet files of an earlier dataset in dir that this run did
// not replace, and temporary files a killed run left, so that the directory holds exactly
// the new dataset. Other files stay.
func removeStale(dir string, files int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	keep := make(map[string]bool, files)
	for i := 0; i < files; i++ {
		keep[FileName(i)] = true
	}
	var errs []error
	for _, e := range ents {
		name := e.Name()
		stale := strings.HasSuffix(name, ".parquet") && !keep[name] ||
			strings.HasPrefix(name, ".part-") && strings.HasSuffix(name, ".tmp")
		if stale && e.Type().IsRegular() {
			errs = append(errs, os.Remove(filepath.Join(dir, name)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing the earlier dataset's files: %w", err)
	}
	return nil
}
