package cache

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/shmloader/shmloader/internal/units"
)

// String is the listing as WriteTo prints it.
func (l *Listing) String() string {
	var b strings.Builder
	l.WriteTo(&b)
	return b.String()
}

// WriteTo prints the listing as tables for people: totals, per config, per shard, then
// whatever needs attention (temp files, other versions, corrupt files, notes).
func (l *Listing) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	fmt.Fprintf(cw, "cache %s: format %d, %d shards, %d entries, %s\n",
		l.Dir, l.Format, l.Shards, l.Entries, units.Bytes(l.Bytes))
	if len(l.Configs) > 0 {
		tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "config\tentries\tbytes\t  labels (sample)")
		for _, cu := range l.Configs {
			name := cu.Config
			if name == "" {
				name = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t  %s\n", name, cu.Entries, units.Bytes(cu.Bytes), strings.Join(cu.Labels, "; "))
		}
		tw.Flush()
	}
	if len(l.PerShard) > 0 {
		tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "shard\tentries\tbytes\tunlisted\t  manifest")
		for _, su := range l.PerShard {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t  %s\n", su.Name, su.Entries, units.Bytes(su.Bytes), su.Unlisted, su.Manifest)
		}
		tw.Flush()
	}
	if len(l.Temps) > 0 {
		fmt.Fprintf(cw, "temp files: %d\n", len(l.Temps))
		for _, t := range l.Temps {
			state := "left by a dead process (removed by the next Open)"
			if t.Live {
				state = "being written"
			}
			fmt.Fprintf(cw, "  %s  pid %d  %s  %s\n", t.Path, t.Pid, units.Bytes(t.Bytes), state)
		}
	}
	printPaths(cw, "files of another format version", l.OtherVersion)
	printPaths(cw, "corrupt or stray files (dropped by the next Open)", l.Corrupt)
	for _, n := range l.Notes {
		fmt.Fprintf(cw, "note: %s\n", n)
	}
	return cw.n, cw.err
}

// printPaths prints a titled list of paths, the first few in full.
func printPaths(w io.Writer, title string, paths []string) {
	const shown = 10
	if len(paths) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d\n", title, len(paths))
	for _, p := range paths[:min(len(paths), shown)] {
		fmt.Fprintf(w, "  %s\n", p)
	}
	if len(paths) > shown {
		fmt.Fprintf(w, "  ... and %d more\n", len(paths)-shown)
	}
}

// countWriter counts bytes and keeps the first error, for WriteTo.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
