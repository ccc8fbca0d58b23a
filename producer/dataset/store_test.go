package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/shmloader/shmloader/internal/testkit"
)

// OpenReader uses the footer Open parsed: reading row groups reads no byte of the footer
// again.
func TestReaderReusesFooter(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 200, writeOpts{rgRows: 100, checksums: true})
	st := &testkit.CountingStore{}
	d, err := OpenStore(context.Background(), st, path)
	if err != nil {
		t.Fatal(err)
	}
	opened := len(st.Reads())
	groups := readAll(t, d, []string{"a", "l"})
	checkValues(t, []string{"a", "l"}, groups[1], 100)
	release(groups)
	footerAt := d.Files[0].Size - 8 - d.Files[0].footerLen
	for _, r := range st.Reads()[opened:] {
		if r.Off+r.N > footerAt {
			t.Errorf("a row group read reads the footer again: %d bytes at %d (footer at %d)", r.N, r.Off, footerAt)
		}
	}
}

// A file rewritten after Open listed it is refused by name when a Reader opens it, even
// with its size unchanged: never bytes of another version under the first one's identity.
func TestRewrittenFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := writeTest(t, dir, "a.parquet", 0, 200, writeOpts{rgRows: 100, checksums: true})
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = d.OpenReader(d.Files[0])
	var de *Error
	if !errors.Is(err, ErrChanged) || !errors.As(err, &de) || de.Path != path {
		t.Fatalf("want ErrChanged naming %s, got %v", path, err)
	}
}

// Every column chunk is read once, by shmloader, through the Store: reading every column
// of every row group, flat ones with ReadChunks (the page decoder's road) and every one
// with ReadRowGroup (arrow-go's), reads each chunk's bytes exactly once per road, the
// footer once at Open, and nothing else. Layouts: codecs, data page v1 and v2, with and
// without dictionaries, chunk checksums, row groups of several sizes, a list and a
// struct column.
func TestChunksAreReadOnceThroughTheStore(t *testing.T) {
	layouts := map[string]writeOpts{
		"snappy-sums": {rgRows: 300, codec: compress.Codecs.Snappy, checksums: true},
		"zstd-v2":     {rgRows: 1000, codec: compress.Codecs.Zstd, props: []parquet.WriterProperty{parquet.WithDataPageVersion(parquet.DataPageV2)}},
		"plain-small": {rgRows: 64, props: []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(512)}},
		"gzip-one-rg": {codec: compress.Codecs.Gzip},
	}
	for name, o := range layouts {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTest(t, dir, "a.parquet", 0, 1000, o)
			writeTest(t, dir, "b.parquet", 1000, 700, o)
			st := &testkit.CountingStore{}
			d, err := OpenStore(context.Background(), st, dir)
			if err != nil {
				t.Fatal(err)
			}
			// Open: one read per file, the footer's tail.
			byFile := map[string]int{}
			for _, r := range st.Reads() {
				byFile[r.Path]++
			}
			for _, f := range d.Files {
				if byFile[f.Path] != 1 {
					t.Errorf("%s: Open read it %d times, want once (the footer)", f.Path, byFile[f.Path])
				}
			}
			names := []string{}
			for _, fl := range d.Schema.Fields() {
				names = append(names, fl.Name)
			}
			for road := range 2 {
				before := len(st.Reads())
				want := map[testkit.Read]int{} // each chunk's range, once
				for _, f := range d.Files {
					meta := footerOf(t, f)
					r, err := d.OpenReader(f)
					if err != nil {
						t.Fatal(err)
					}
					for rg := range meta.RowGroups {
						for leaf := range meta.Schema.NumColumns() {
							start, n, _ := chunkRange(meta, rg, leaf)
							flat := meta.Schema.Column(leaf).MaxRepetitionLevel() == 0
							if road == 1 || flat {
								want[testkit.Read{Path: f.Path, Off: start, N: n}]++
							}
						}
						if road == 0 {
							var ls []Leaf
							for leaf := range meta.Schema.NumColumns() {
								if l := leafOf(meta.Schema.Column(leaf), leaf); l.MaxRep == 0 {
									ls = append(ls, l)
								}
							}
							for _, l := range ls { // one at a time: adjacent chunks are read together
								if _, _, err := r.ReadChunks(context.Background(), rg, []Leaf{l}, nil); err != nil {
									t.Fatal(err)
								}
							}
						} else {
							cols, err := r.ReadRowGroup(context.Background(), rg, names)
							if err != nil {
								t.Fatal(err)
							}
							release([][]*arrow.Chunked{cols})
						}
					}
					r.Close()
				}
				got := map[testkit.Read]int{}
				for _, rd := range st.Reads()[before:] {
					got[rd]++
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("road %d: reads %v, want each chunk once: %v", road, got, want)
				}
			}
		})
	}
}
