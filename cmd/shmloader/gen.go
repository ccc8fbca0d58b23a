package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/shmloader/shmloader/producer/gen"
)

func runGen(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return genCommand(ctx, args, stdout, stderr)
}

// genCommand is `shmloader gen`: help asked for goes to stdout; progress, usage errors
// and flag errors go to log.
func genCommand(ctx context.Context, args []string, stdout, log io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	c := gen.DefaultConfig()
	fs.StringVar(&c.Out, "out", "", "output directory (required; created if missing)")
	fs.Int64Var(&c.Rows, "rows", c.Rows, "rows in all")
	fs.IntVar(&c.Files, "files", c.Files, "files part-00000.parquet ...")
	fs.Int64Var(&c.RowGroupRows, "row-group-rows", c.RowGroupRows, "rows per row group")
	fs.StringVar(&c.Compression, "compression", c.Compression, "snappy, zstd, lz4 (Parquet's deprecated LZ4, Hadoop-framed), lz4_raw or none")
	fs.IntVar(&c.Features, "features", c.Features, fmt.Sprintf("float32 feature columns f000.. (0-%d)", gen.MaxFeatures))
	fs.IntVar(&c.Categoricals, "categoricals", c.Categoricals, fmt.Sprintf("int64 categorical columns c00.. (0-%d)", gen.MaxCategoricals))
	fs.IntVar(&c.Strings, "strings", c.Strings, fmt.Sprintf("string categorical columns s00.. (0-%d)", gen.MaxStrings))
	fs.IntVar(&c.ListMax, "list-max", c.ListMax, "longest list in column seq")
	fs.Float64Var(&c.NullFraction, "null-fraction", c.NullFraction, "share of nulls in the nullable columns")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of every value")
	fs.BoolVar(&c.Overwrite, "overwrite", false, "write into a non-empty directory, replacing its *.parquet files")
	quiet := fs.Bool("quiet", false, "no progress, only errors")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader gen --out DIR [flags]\n\n"+
			"Writes a synthetic Parquet dataset: id, features f000.. (float32, every 4th with nulls),\n"+
			"categoricals c00.. (int64) and s00.. (string), seq (list<int64>) and label (0/1).\n"+
			"Every value depends only on (seed, id, column): the same flags give the same bytes.\n\n")
		printFlags(fs)
	}
	if err := parseFlags(fs, args, stdout, log); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if c.Out == "" {
		fs.Usage()
		return usageErrorf("--out is required")
	}
	if c.Rows < 1 || c.Files < 1 || c.RowGroupRows < 1 {
		return usageErrorf("--rows, --files and --row-group-rows must be >= 1 (got %d, %d, %d)", c.Rows, c.Files, c.RowGroupRows)
	}
	progress := log
	if *quiet {
		progress = io.Discard
	}
	return gen.Write(ctx, c, progress)
}
