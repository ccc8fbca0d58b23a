package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/shmloader/shmloader/producer/synthetic"
)

func runDebugProduce(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("debug-produce", flag.ContinueOnError)
	var c synthetic.Config
	fs.StringVar(&c.Job, "job", "", "job name (required)")
	fs.StringVar(&c.Dir, "dir", "", "segment directory (default $SHMLOADER_SHM_DIR or /dev/shm)")
	fs.IntVar(&c.Ranks, "ranks", 2, "rings, one per trainer rank")
	fs.IntVar(&c.Depth, "depth", 8, "slots per ring")
	fs.IntVar(&c.Rows, "rows", 16, "rows per batch")
	fs.IntVar(&c.RowBytes, "row-bytes", 256, "payload bytes per row")
	fs.Uint64Var(&c.Batches, "batches", 100, "batches per epoch per rank")
	fs.Uint64Var(&c.Epochs, "epochs", 1, "epochs; 0 = endless")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the payload bytes")
	interval := fs.Int("interval-us", 0, "pause between batches of a rank, in microseconds")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", 30e9, "at the end, how long to wait for consumers to read everything")
	fs.BoolVar(&c.Copy, "copy", false, "copy one pre-made batch into every slot and skip the stream CRC (benchmarks)")
	fs.BoolVar(&c.Empty, "empty", false, "slots hold only the t_ns stamp tensor (handoff benchmarks)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader debug-produce --job NAME [flags]\n\n"+
			"Serves a synthetic stream (tensors id, payload, crc, t_ns; see producer/synthetic).\n"+
			"At the end prints one line per rank: rank=R batches=N rows=M crc32=XXXXXXXX.\n\n")
		printFlags(fs)
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if c.Job == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("--job NAME is required, and there are no operands")
	}
	c.Interval = microseconds(*interval)
	c.Log = stderr
	if *quiet {
		c.Log = io.Discard
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	results, err := synthetic.Run(ctx, c)
	for _, r := range results {
		fmt.Fprintln(stdout, r) // the transport tests read these
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(c.Log, "debug-produce: stopped by signal; segments removed")
		return nil
	}
	return err
}

func microseconds(us int) time.Duration { return time.Duration(us) * time.Microsecond }
