package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/dataset"
)

// inspectCommand is `shmloader inspect`: the report (and help asked for) goes to out,
// usage errors and --verify's progress to log.
func inspectCommand(args []string, out, log io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	rowGroups := fs.Bool("row-groups", false, "also list every row group")
	verify := fs.Bool("verify", false, "read and check every page instead (see above); exit status 1 if anything is damaged")
	cfgPath := fs.String("config", "", "with --verify: check only the columns this serve config's outputs and filter read, of its dataset")
	workers := fs.Int("workers", 0, "with --verify: row groups checked at once, 0 = GOMAXPROCS")
	quiet := fs.Bool("quiet", false, "with --verify: no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: shmloader inspect DATASET [--row-groups]\n"+
			"       shmloader inspect --verify [--config FILE] [--workers N] [--quiet] [DATASET]\n\n"+
			"Prints a Parquet dataset's files, schema and totals from the footers alone.\n"+
			"DATASET is a file, a directory (its *.parquet files at any depth, leaving out\n"+
			"names that start with . or _) or a glob; a relative one is relative to the\n"+
			"current directory (a dataset named help: ./help). The schema lists the fields\n"+
			"of structs by their dotted paths and the partition columns of key=value\n"+
			"folders, as outputs and the filter name them.\n\n"+
			"With --verify it checks instead that serve will read the dataset: it reads every\n"+
			"page of every column of every row group, with the checks serve makes (page\n"+
			"headers; level and value counts and sizes against the header and the footer;\n"+
			"decompression; dictionary indices; page and chunk CRCs where the file has them;\n"+
			"nested columns through arrow-go), a flat column decoded into its Arrow array\n"+
			"(the filter's road, which checks all that an output's page by page road does,\n"+
			"and the values arrow-go refuses). It goes on past\n"+
			"damage, and prints on stdout every damaged column chunk (file, row group, column\n"+
			"and page), a summary of what it checked and what to do. Exit status: 0 nothing\n"+
			"damaged; 1 damage found, stopped early, or an error; 2 a usage error. With\n"+
			"--config it reads only the columns that serve config's outputs and filter use, the\n"+
			"way serve reads them; a DATASET given replaces the config's dataset. Row groups are\n"+
			"checked in parallel, each worker holding one row group's chunks at a time. It\n"+
			"shows its progress on stderr (a bar on a terminal, else a line every 5 s), and\n"+
			"Ctrl-C stops it with what it found so far.\n\n")
		printFlags(fs)
	}
	// Flags may come before or after DATASET; the flag package stops at the first operand.
	var operands []string
	for {
		if len(operands) > 0 && len(args) == 1 && args[0] == "help" {
			operands = append(operands, args[0]) // an operand here, not a request for help
			break
		}
		if err := parseFlags(fs, args, out, log); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case !*verify && (set["config"] || set["workers"] || set["quiet"]):
		fs.Usage()
		return usageErrorf("--config, --workers and --quiet go with --verify")
	case *verify && *rowGroups:
		fs.Usage()
		return usageErrorf("--row-groups lists the footers' row groups; --verify reads them instead: give one")
	case *workers < 0:
		fs.Usage()
		return usageErrorf("--workers must be >= 0, got %d", *workers)
	case *verify && *cfgPath != "" && len(operands) <= 1:
		return verifyCommand(strings.Join(operands, ""), *cfgPath, *workers, *quiet, out, log)
	case len(operands) != 1:
		fs.Usage()
		return usageErrorf("want one DATASET, got %d", len(operands))
	case *verify:
		return verifyCommand(operands[0], "", *workers, *quiet, out, log)
	}
	d, err := dataset.Open(operands[0])
	if err != nil {
		return err
	}
	printInspect(out, d, *rowGroups)
	return nil
}

func printInspect(out io.Writer, d *dataset.Dataset, rowGroups bool) {
	perFile := make([]struct {
		rowGroups int
		rows      int64
	}, len(d.Files))
	var comp, uncomp int64
	for _, rg := range d.RowGroups {
		perFile[rg.File.Index].rowGroups++
		perFile[rg.File.Index].rows += rg.Rows
		comp += rg.CompressedBytes
		uncomp += rg.UncompressedBytes
	}
	fmt.Fprintf(out, "dataset:     %s\nfingerprint: %016x\n\nfiles:\n", d.Pattern, d.Fingerprint())
	// Numbers align right; paths are padded to one width so that they stay left-aligned.
	w := len("PATH")
	for _, f := range d.Files {
		w = max(w, len(f.Path))
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tROWS\tROW GROUPS\tBYTES\tCOMPRESSION\t\n", w, "PATH")
	for i, f := range d.Files {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%s\t%s\t\n", w, f.Path, perFile[i].rows, perFile[i].rowGroups, units.Bytes(f.Size), codecs(f))
	}
	tw.Flush()

	fmt.Fprintf(out, "\nschema (%d columns", d.Schema.NumFields())
	if len(d.Partitions) > 0 {
		fmt.Fprintf(out, ", the last %d from key=value folders", len(d.Partitions))
	}
	fmt.Fprintf(out, "):\n")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  COLUMN\tTYPE\tNULLABLE\n")
	for _, name := range d.ColumnNames() {
		f, _ := d.Field(name)
		// The last column is text, not a cell: pad its "no" by hand where a note follows.
		switch {
		case d.IsPartition(name):
			fmt.Fprintf(tw, "  %s\t%s\t%-3s  partition: %s=... folders\n", name, f.Type, yesNo(f.Nullable), name)
		case !d.Schema.HasField(name):
			fmt.Fprintf(tw, "  %s\t%s\t%-3s  field of a struct\n", name, f.Type, yesNo(f.Nullable))
		default:
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, f.Type, yesNo(f.Nullable))
		}
	}
	tw.Flush()
	var notes []string
	for _, f := range d.Files {
		for _, n := range f.Notes {
			notes = append(notes, f.Path+": "+n)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(out, "\nnotes:\n  %s\n", strings.Join(notes, "\n  "))
	}

	fmt.Fprintf(out, "\ntotals:\n")
	tw = tabwriter.NewWriter(out, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "  files:\t%d\n  row groups:\t%d\n  rows:\t%d\n", len(d.Files), len(d.RowGroups), d.Rows)
	fmt.Fprintf(tw, "  compressed:\t%s (%d bytes)\n  uncompressed:\t%s (%d bytes)\n", units.Bytes(comp), comp, units.Bytes(uncomp), uncomp)
	tw.Flush()

	if rowGroups {
		fmt.Fprintf(out, "\nrow groups:\n")
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "GLOBAL\t%-*s\tINDEX\tROWS\tCOMPRESSED\tUNCOMPRESSED\t\n", w, "FILE")
		for _, rg := range d.RowGroups {
			fmt.Fprintf(tw, "%d\t%-*s\t%d\t%d\t%s\t%s\t\n", rg.Global, w, rg.File.Path, rg.Index, rg.Rows, units.Bytes(rg.CompressedBytes), units.Bytes(rg.UncompressedBytes))
		}
		tw.Flush()
	}
}

// codecs lists the compression codecs of a file's column chunks.
func codecs(f *dataset.File) string {
	seen := map[string]bool{}
	meta, err := f.Footer()
	if err != nil {
		return err.Error()
	}
	for i := range meta.RowGroups {
		rg := meta.RowGroup(i)
		for j := 0; j < rg.NumColumns(); j++ {
			if cc, err := rg.ColumnChunk(j); err == nil {
				seen[cc.Compression().String()] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
