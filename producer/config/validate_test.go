package config

import (
	"fmt"
	"strings"
	"testing"
)

const minimal = "dataset: d\nnode: {rank: 0, count: 2}\nranks: 2\noutputs: {x: a}\n"

func TestValidate(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"ok", minimal, ""},
		{"no dataset", "outputs: {x: a}\n", "dataset: required"},
		{"no outputs", "dataset: d\n", "outputs: at least one output is required"},
		{"node rank", "dataset: d\nnode:\n  rank: 2\n  count: 2\noutputs: {x: a}\n", "t.yaml:3: node.rank: must be < node.count (2), got 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mustParse(t, tc.yaml).Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSet: overrides follow the file's rules, and an error after an override blames
// the override, not the file's line.
func TestSet(t *testing.T) {
	c := mustParse(t, minimal)
	for _, kv := range [][2]string{{"node.rank", "1"}, {"seed", "7"}, {"job", "123"}, {"progress", "0"},
		{"shuffle.row_groups", "false"}, {"dataset", "data/x-*.parquet"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%q, %q): %v", kv[0], kv[1], err)
		}
	}
	if c.Node != (Node{1, 2}) || c.Seed != 7 || c.Job != "123" || c.Progress != 0 || c.Shuffle.RowGroups ||
		c.Shuffle.Window != 4 || c.Dataset != "data/x-*.parquet" {
		t.Fatalf("after Set: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("node.count", "1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || err.Error() != "node.rank: must be < node.count (1), got 1" {
		t.Fatalf("Validate() = %v, want the error without the file's line", err)
	}
	bad := []struct{ key, value, want string }{
		{"ranks", "0", "ranks: must be in 1..4096, got 0"},
		{"batchsize", "8", `unknown key "batchsize" (did you mean "batch_size"?)`},
		{"node.rnak", "8", `node: unknown key "rnak" (did you mean "rank"?)`},
		{"workers", "many", `workers: want an integer, got the string "many"`},
		{"progress", "soon", `progress: want a duration like 5s or 500ms, got "soon"`},
		{"job", "a/b", `job: invalid job name "a/b"`},
		{"dataset", "", "dataset: must not be empty"},
		{"outputs", "x", "outputs: want a mapping of output names to outputs"},
		{"seed", "[1, 2]", "seed: want a single value, got a list"},
	}
	for _, b := range bad {
		if err := c.Set(b.key, b.value); err == nil || !strings.HasPrefix(err.Error(), b.want) {
			t.Errorf("Set(%q, %q) = %v, want %q", b.key, b.value, err, b.want)
		}
	}
	if c.Ranks != 2 || c.Workers != 0 || c.Dataset != "data/x-*.parquet" {
		t.Fatalf("a failed Set changed the config: %+v", c)
	}
}

// TestValidateInCode: a config built in code gets the checks a file gets.
func TestValidateInCode(t *testing.T) {
	base := func() Config {
		c := Default()
		c.Dataset = "d"
		c.Outputs = []Output{{Name: "x", Columns: []string{"a"}}}
		return c
	}
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"ok", func(*Config) {}, ""},
		{"ring depth", func(c *Config) { c.RingDepth = 1 }, "ring_depth: must be in 2..65536, got 1"},
		{"batch", func(c *Config) { c.BatchSize = 0 }, "batch_size: must be in 1..1073741824, got 0"},
		{"job", func(c *Config) { c.Job = "" }, "job: invalid job name"},
		{"progress", func(c *Config) { c.Progress = -1 }, "progress: must be >= 0"},
		{"output name", func(c *Config) { c.Outputs[0].Name = "a b" }, "outputs.a b: output name"},
		{"no columns", func(c *Config) { c.Outputs[0].Columns = nil }, "outputs.x: no columns"},
		{"dtype", func(c *Config) { c.Outputs[0].DType = "f32" }, `outputs.x: dtype: unknown dtype "f32"`},
		{"twice", func(c *Config) { c.Outputs = append(c.Outputs, c.Outputs[0]) }, `outputs.x: output "x" given twice`},
		{"std", func(c *Config) {
			c.Outputs[0].Transforms = []Transform{{Op: OpLog1p}, {Op: OpNormalize, Mean: []float64{0}, Std: []float64{-1}}}
		}, "outputs.x.transforms[1].normalize: std must be > 0, got -1"},
		{"op", func(c *Config) { c.Outputs[0].Transforms = []Transform{{Op: "sqrt"}} }, `outputs.x.transforms[0].sqrt: unknown transform "sqrt"`},
		{"datetime part", func(c *Config) { c.Outputs[0].Transforms = []Transform{{Op: OpDatetime, Part: "week"}} },
			`outputs.x.transforms[0].datetime: part "week": want one of`},
		{"datetime tz", func(c *Config) { c.Outputs[0].Transforms = []Transform{{Op: OpDatetime, Part: "hour", TZ: "Nowhere"}} },
			`outputs.x.transforms[0].datetime: unknown time zone "Nowhere"`},
		{"datetime second", func(c *Config) {
			c.Outputs[0].Transforms = []Transform{{Op: OpLog1p}, {Op: OpDatetime, Part: "hour"}}
		}, `outputs.x.transforms[1].datetime: datetime must be the first step`},
		{"decimal scale", func(c *Config) { c.Outputs[0].Transforms = []Transform{{Op: OpDecimal, Scale: -1}} },
			`outputs.x.transforms[0].decimal: scale must be in 0..76, got -1`},
		{"decimal ok", func(c *Config) { c.Outputs[0].Transforms = []Transform{{Op: OpDecimal, Unscaled: true}} }, ""},
		{"predicate", func(c *Config) { c.Filter = []Predicate{{Column: "a", Op: PredIn}} }, `filter[0]: op "in" needs at least one of values`},
		{"too many", func(c *Config) {
			for i := range 300 {
				c.Outputs = append(c.Outputs, Output{Name: fmt.Sprintf("o%d", i), Columns: []string{"a"}})
			}
		}, "outputs: 301 tensors"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
