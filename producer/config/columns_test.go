package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// schema is the synthetic dataset's columns, in schema order.
func schema() []string {
	names := []string{"id"}
	for i := range 100 {
		names = append(names, fmt.Sprintf("f%03d", i))
	}
	for i := range 26 {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	return append(names, "s00", "s01", "s02", "s03", "seq", "label", "odd..name", "x*")
}

func TestExpandColumns(t *testing.T) {
	cases := []struct {
		name     string
		patterns []string
		want     string // the columns joined by spaces, or the error
	}{
		{"exact", []string{"label", "id"}, "label id"},
		{"range", []string{"c03..c06"}, "c03 c04 c05 c06"},
		{"one-name range", []string{"f010..f010"}, "f010"},
		{"full range", []string{"f000..f099"}, strings.Join(schema()[1:101], " ")},
		{"glob in schema order", []string{"s0[2-3]", "s0?"}, `column "s02" listed twice (by "s0[2-3]" and by "s0?")`},
		{"glob", []string{"label", "s*"}, "label s00 s01 s02 s03 seq"},
		{"exact name beats pattern", []string{"odd..name", "x*"}, "odd..name x*"},
		{"order of patterns", []string{"c01", "f001", "c00"}, "c01 f001 c00"},
		{"none", nil, "no columns given"},
		{"missing", []string{"lable"}, `no column "lable" (did you mean "label"?)`},
		{"glob matches nothing", []string{"z*"}, `column pattern "z*" matches no column`},
		{"bad glob", []string{"f[0"}, `column pattern "f[0": syntax error in pattern`},
		{"range past end", []string{"c20..c30"}, `column range "c20..c30": no column "c26"`},
		{"range widths", []string{"f0..f099"}, `column range "f0..f099": ends have 1 and 3 digits; write both with the same width`},
		{"range prefixes", []string{"f000..c099"}, `column range "f000..c099": ends have different prefixes "f" and "c"`},
		{"range backwards", []string{"f009..f001"}, `column range "f009..f001": start is after end`},
		{"range no digits", []string{"a..b"}, `column range "a..b": both ends must end in digits`},
		{"range huge", []string{"f0000000000..f9999999999"}, `column range "f0000000000..f9999999999" spans 10000000000 names, the dataset has 135 columns`},
		{"duplicate", []string{"f000..f010", "f005"}, `column "f005" listed twice (by "f000..f010" and by "f005")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExpandColumns(tc.patterns, schema())
			s := strings.Join(got, " ")
			if err != nil {
				s = err.Error()
			}
			if s != tc.want {
				t.Fatalf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
}

func TestExpandOutputs(t *testing.T) {
	c, err := Parse([]byte(DefaultYAML), "default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cols, err := c.ExpandOutputs(schema())
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != len(c.Outputs) || len(cols[0]) != 90 || !reflect.DeepEqual(cols[1], schema()[91:101]) {
		t.Fatalf("got %v", cols)
	}
	bad := []struct{ yaml, want string }{
		{"outputs:\n  a:\n    columns: [f000..f120]\n", `t.yaml:3: outputs.a.columns: column range "f000..f120": no column "f100"`},
		{"outputs:\n  a: nope\n", `t.yaml:2: outputs.a: no column "nope"`},
		{"filter:\n  - {column: lable, op: is_null}\noutputs: {a: id}\n", `t.yaml:2: filter[0]: no column "lable" (did you mean "label"?)`},
		{tr("- normalize: {mean: [1, 2, 3]}"), `t.yaml:5: outputs.a.transforms[0].normalize: 3 values in a list for 1 columns`},
	}
	for _, b := range bad {
		c := mustParse(t, strings.Replace(b.yaml, "columns: x", "columns: f000", 1))
		if _, err := c.ExpandOutputs(schema()); err == nil || err.Error() != b.want {
			t.Errorf("got  %v\nwant %s", err, b.want)
		}
	}
}
