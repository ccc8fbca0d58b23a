package dataset

import (
	"errors"
	"strings"
	"testing"
)

// withFooterBudget runs Opens under another footer budget.
func withFooterBudget(t *testing.T, budget int64) {
	old := footerBudget
	footerBudget = budget
	t.Cleanup(func() { footerBudget = old })
}

// openFiles writes n files of 200 rows (row groups of 100), rows numbered on across them.
func openFiles(t *testing.T, n int) (*Dataset, []string) {
	dir := t.TempDir()
	var paths []string
	for i := range n {
		paths = append(paths, writeTest(t, dir, string(rune('a'+i))+".parquet", int64(i)*200, 200, writeOpts{rgRows: 100, checksums: true}))
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d, paths
}

func kept(d *Dataset) (n int) {
	for _, f := range d.Files {
		if f.ft != nil {
			n++
		}
	}
	return n
}

// Under a budget smaller than one footer a dataset keeps only the footer it used last:
// what it holds does not grow with its files. Every other footer is read again when
// needed, and the rows, statistics and checksums read through them are the same.
func TestFootersBeyondTheBudgetAreReadAgain(t *testing.T) {
	withFooterBudget(t, 1)
	d, _ := openFiles(t, 5)
	if k := kept(d); k != 1 || d.Files[4].ft == nil || d.footers.lru.Len() != 1 {
		t.Fatalf("after Open, %d footers kept (want only the last file's)", k)
	}
	checkAllValues(t, d, 100) // every file's footer read again, one at a time
	if k := kept(d); k != 1 {
		t.Fatalf("after reading, %d footers kept", k)
	}
	for _, rg := range d.RowGroups {
		st, err := d.Stats(rg, "a")
		if err != nil || st.Rows != 100 || !st.HasMinMax {
			t.Fatalf("row group %d: %+v %v", rg.Global, st, err)
		}
	}
	for _, f := range d.Files {
		ft, err := f.footer()
		if err != nil || ft.sums == nil {
			t.Fatalf("%s: checksums not read again: %v", f.Path, err)
		}
	}
}

// Under the default budget a small dataset keeps every footer and reads none again.
func TestFootersWithinTheBudgetAreKept(t *testing.T) {
	d, _ := openFiles(t, 5)
	if k := kept(d); k != 5 {
		t.Fatalf("%d of 5 footers kept", k)
	}
	ft := d.Files[0].ft
	checkAllValues(t, d, 100)
	if d.Files[0].ft != ft {
		t.Fatal("a kept footer was read again")
	}
}

// A file rewritten after Open is not read through its old footer, nor its new one
// taken as the old: reading it again is an error that names it.
func TestAFileChangedAfterOpenIsAnError(t *testing.T) {
	withFooterBudget(t, 1)
	d, paths := openFiles(t, 2)
	rewritten := writeTest(t, strings.TrimSuffix(paths[0], "/a.parquet"), "a.parquet", 1000, 300, writeOpts{rgRows: 100})
	_, err := d.Files[0].Footer()
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), rewritten) {
		t.Fatalf("footer of a rewritten file: %v", err)
	}
	if _, err := d.OpenReader(d.Files[0]); !errors.Is(err, ErrChanged) {
		t.Fatalf("reader of a rewritten file: %v", err)
	}
}
