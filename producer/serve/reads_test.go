package serve

import (
	"testing"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/dataset"
)

// Serving reads every byte it needs through the dataset's Store once: each file's
// footer with one read when the dataset is opened, then, per row group decoded, the
// chunks of the columns the outputs use (flat ones for the page decoder, a list's for
// arrow-go), each exactly once, and nothing else. Checked for one epoch of one rank
// (two ranks far apart may each need a window decoded again once memory took it back),
// without a cache, on the test job's outputs: every column kind, a list among them.
func TestServingReadsEachChunkOnce(t *testing.T) {
	cfg := testConfig(t)
	cfg.Epochs, cfg.Ranks = 1, 1
	st := &testkit.CountingStore{}
	serveAndRead(t, cfg, Options{Store: st}, nil)

	ds, err := dataset.Open(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	src, err := newSource(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type chunk struct {
		path  string
		start int64
	}
	size, times := map[chunk]int64{}, map[chunk]int{}
	footerAt := map[string]int64{}
	for _, f := range ds.Files {
		meta, err := f.Footer()
		if err != nil {
			t.Fatal(err)
		}
		r, err := ds.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range src.columns {
			ls, err := r.ColumnLeaves(name)
			if err != nil {
				t.Fatal(name, err)
			}
			for _, l := range ls {
				for rg := range meta.RowGroups {
					md := meta.RowGroups[rg].Columns[l.Index].MetaData
					start := md.DataPageOffset
					if md.DictionaryPageOffset != nil && *md.DictionaryPageOffset > 0 && *md.DictionaryPageOffset < start {
						start = *md.DictionaryPageOffset
					}
					size[chunk{f.Path, start}] = md.TotalCompressedSize
				}
			}
		}
		r.Close()
		footerAt[f.Path] = f.Size - 8 - 4 // the footer's length and magic at least
	}
	footers := map[string]int{}
	for _, rd := range st.Reads() {
		if rd.Off+rd.N > footerAt[rd.Path] {
			footers[rd.Path]++
			continue
		}
		for pos := rd.Off; pos < rd.Off+rd.N; {
			n, ok := size[chunk{rd.Path, pos}]
			if !ok {
				t.Fatalf("%s: a read of %d bytes at %d covers bytes at %d that are no needed chunk", rd.Path, rd.N, rd.Off, pos)
			}
			times[chunk{rd.Path, pos}]++
			pos += n
		}
	}
	for _, f := range ds.Files {
		if footers[f.Path] != 1 {
			t.Errorf("%s: its footer was read %d times, want once", f.Path, footers[f.Path])
		}
	}
	if len(size) == 0 {
		t.Fatal("no chunks")
	}
	for c := range size {
		if times[c] != 1 {
			t.Errorf("%s: the chunk at %d was read %d times, want once", c.path, c.start, times[c])
		}
	}
}
