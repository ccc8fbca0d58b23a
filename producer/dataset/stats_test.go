package dataset

import (
	"errors"
	"testing"
)

func TestStats(t *testing.T) {
	dir := t.TempDir()
	writeTest(t, dir, "a.parquet", 0, 200, writeOpts{rgRows: 100})
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rg := d.RowGroups[1] // rows 100..199
	nullsB := 0
	for i := 100; i < 200; i++ {
		if i%7 == 3 {
			nullsB++
		}
	}
	cases := []struct {
		col  string
		want Stats
	}{
		{"a", Stats{Rows: 100, HasNullCount: true, HasMinMax: true, Kind: KindInt, MinI: 100, MaxI: 199, MinF: 100, MaxF: 199}},
		{"b", Stats{Rows: 100, HasNullCount: true, NullCount: int64(nullsB), HasMinMax: true, Kind: KindFloat, MinF: 50, MaxF: 99}}, // row 199 is null,
		{"s", Stats{Rows: 100, HasNullCount: true, NullCount: 20, HasMinMax: true, Kind: KindString, MinS: "s00", MaxS: "s12"}},
		{"l", Stats{Rows: 100}}, // a list: no footer statistics of its own
	}
	for _, c := range cases {
		got, err := d.Stats(rg, c.col)
		if err != nil {
			t.Fatalf("%s: %v", c.col, err)
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.col, got, c.want)
		}
	}
	if _, err := d.Stats(rg, "zz"); !errors.Is(err, ErrNoColumn) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := d.Stats(RowGroup{File: d.Files[0], Index: 9}, "a"); !errors.Is(err, ErrRowGroup) {
		t.Errorf("bad row group: %v", err)
	}
}
