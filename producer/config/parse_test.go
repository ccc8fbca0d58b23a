package config

import (
	"reflect"
	"testing"
	"time"
)

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), "t.yaml")
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, "dataset: d\noutputs: {x: a}\n")
	want := Default()
	want.Dataset = "d"
	want.Outputs = []Output{{Name: "x", Columns: []string{"a"}, Line: 2}}
	c.Lines, c.Source = nil, ""
	if !reflect.DeepEqual(*c, want) {
		t.Fatalf("got  %+v\nwant %+v", *c, want)
	}
	d := Default()
	if d.Job != "train" || d.BatchSize != 1024 || d.Epochs != 1 || !d.Shuffle.RowGroups || d.Shuffle.Window != 4 ||
		!d.DropLast || d.Ranks != 1 || d.Node != (Node{0, 1}) || d.RingDepth != 8 || d.Workers != 0 ||
		d.Prefetch != 2 || d.Progress != 5*time.Second || d.Seed != 0 || d.Partitions != 0 || d.Cache != (Cache{Shards: 16}) {
		t.Fatalf("Default() = %+v, not the documented defaults", d)
	}
}

// TestZeroIsNotAbsent: a key written with its zero value overrides a non-zero default.
func TestZeroIsNotAbsent(t *testing.T) {
	c := mustParse(t, "epochs: 0\ndrop_last: false\nshuffle: {row_groups: false}\nprogress: 0\nprefetch: 0\n")
	if c.Epochs != 0 || c.DropLast || c.Shuffle.RowGroups || c.Progress != 0 || c.Prefetch != 0 {
		t.Fatalf("zero values not honoured: %+v", c)
	}
	if c.Shuffle.Window != 4 {
		t.Fatalf("shuffle.window = %d, want the default 4 kept beside row_groups", c.Shuffle.Window)
	}
}

func TestScalars(t *testing.T) {
	c := mustParse(t, "seed: 18446744073709551615\nbatch_size: 0x100\nprogress: 1m30s\njob: 42\nring_depth: 4096\n")
	if c.Seed != 1<<64-1 || c.BatchSize != 256 || c.Progress != 90*time.Second || c.Job != "42" || c.RingDepth != 4096 {
		t.Fatalf("got %+v", c)
	}
}

// TestShorthands: each short form of a step means the same as its long form.
func TestShorthands(t *testing.T) {
	pairs := [][2]string{
		{"- cast: int32", "- cast: {dtype: int32}"},
		{"- fill_null: 0", "- fill_null: {value: 0}"},
		{"- log1p", "- log1p: {}"},
		{"- log1p", "- log1p:"},
		{"- bucketize: [1, 2]", "- bucketize: {boundaries: [1, 2]}"},
		{"- hash_bucket: 9", "- hash_bucket: {buckets: 9, seed: 0}"},
		{"- pad: 16", "- pad: {length: 16, value: 0}"},
		{"- normalize: {mean: 0}", "- normalize: {mean: [0], std: 1}"},
		{"- datetime: hour", "- datetime: {part: hour}"},
		{"- datetime: day", "- datetime: {part: day, tz: \"\"}"},
	}
	for _, p := range pairs {
		a, b := mustParse(t, tr(p[0])), mustParse(t, tr(p[1]))
		if string(a.HashInput()) != string(b.HashInput()) {
			t.Errorf("%q and %q differ:\n%s\n%s", p[0], p[1], a.HashInput(), b.HashInput())
		}
	}
	a := mustParse(t, "outputs:\n  a: [x, y]\n  b: z\n")
	b := mustParse(t, "outputs:\n  a: {columns: [x, y]}\n  b: {columns: z}\n")
	if string(a.HashInput()) != string(b.HashInput()) {
		t.Errorf("output shorthand differs:\n%s\n%s", a.HashInput(), b.HashInput())
	}
}

func TestTransformValues(t *testing.T) {
	c := mustParse(t, tr("- fill_null: \"\"\n      - clip: {max: 3}\n      - normalize: {mean: [1, 2], std: 4}\n      - fill_null: \"7\""))
	ts := c.Outputs[0].Transforms
	if !ts[0].Fill.IsStr || ts[0].Fill.Str != "" {
		t.Errorf("fill_null \"\" = %+v", ts[0].Fill)
	}
	if ts[1].Min != nil || ts[1].Max == nil || *ts[1].Max != 3 {
		t.Errorf("clip {max: 3}: min %v max %v", ts[1].Min, ts[1].Max)
	}
	if !reflect.DeepEqual(ts[2].Mean, []float64{1, 2}) || !reflect.DeepEqual(ts[2].Std, []float64{4}) {
		t.Errorf("normalize = %v %v", ts[2].Mean, ts[2].Std)
	}
	if !ts[3].Fill.IsStr || ts[3].Fill.Str != "7" {
		t.Errorf("quoted \"7\" must stay a string: %+v", ts[3].Fill)
	}
}

func TestTimeAndDecimalSteps(t *testing.T) {
	c := mustParse(t, "outputs:\n  a: {columns: t, transforms: [datetime: {part: day_of_week, tz: \"-03:30\"}, cast: int8]}\n"+
		"  b: {columns: d, transforms: [decimal: unscaled]}\n  c: {columns: d, transforms: [decimal: {scale: 4}]}\n")
	if ts := c.Outputs[0].Transforms; ts[0].Op != OpDatetime || ts[0].Part != "day_of_week" || ts[0].TZ != "-03:30" || ts[1].DType != "int8" {
		t.Errorf("datetime: %+v", ts)
	}
	if b, d := c.Outputs[1].Transforms[0], c.Outputs[2].Transforms[0]; !b.Unscaled || d.Unscaled || d.Scale != 4 {
		t.Errorf("decimal: %+v %+v", b, d)
	}
	texts := map[string]bool{}
	for _, src := range []string{"- datetime: hour", "- datetime: {part: hour, tz: UTC}", "- datetime: minute",
		"- decimal: unscaled", "- decimal: {scale: 0}", "- decimal: {scale: 2}"} {
		texts[string(mustParse(t, tr(src)).HashInput())] = true
	}
	if len(texts) != 6 {
		t.Errorf("distinct steps share a config hash: %d distinct of 6", len(texts))
	}
}

func TestLines(t *testing.T) {
	c := mustParse(t, "dataset: d\nbatch_size: 8\nfilter:\n  - {column: a, op: is_null}\noutputs:\n  features:\n    columns: x\n    transforms:\n      - log1p\n      - clip: {min: 0}\n")
	want := map[string]int{"dataset": 1, "batch_size": 2, "filter": 3, "filter[0]": 4, "filter[0].op": 4,
		"outputs": 5, "outputs.features": 6, "outputs.features.columns": 7, "outputs.features.transforms": 8,
		"outputs.features.transforms[0]": 9, "outputs.features.transforms[1]": 10,
		"outputs.features.transforms[1].clip": 10, "outputs.features.transforms[1].clip.min": 10}
	for k, v := range want {
		if c.Lines[k] != v {
			t.Errorf("Lines[%q] = %d, want %d", k, c.Lines[k], v)
		}
	}
	o := c.Outputs[0]
	if o.Line != 6 || o.Transforms[0].Line != 9 || o.Transforms[1].Line != 10 || c.Filter[0].Line != 4 {
		t.Errorf("Line fields: output %d transforms %d %d predicate %d", o.Line, o.Transforms[0].Line, o.Transforms[1].Line, c.Filter[0].Line)
	}
}

// TestAliases: an anchor shares a list of steps between outputs.
func TestAliases(t *testing.T) {
	c := mustParse(t, "outputs:\n  a: {columns: x, transforms: &std [fill_null: 0, log1p]}\n  b: {columns: y, transforms: *std}\n")
	if len(c.Outputs[1].Transforms) != 2 || c.Outputs[1].Transforms[1].Op != OpLog1p {
		t.Fatalf("alias not followed: %+v", c.Outputs[1])
	}
}

func TestOrderKept(t *testing.T) {
	c := mustParse(t, "outputs:\n  z: a\n  a: b\n  m: c\n")
	var names []string
	for _, o := range c.Outputs {
		names = append(names, o.Name)
	}
	if !reflect.DeepEqual(names, []string{"z", "a", "m"}) {
		t.Fatalf("outputs in order %v, want the file's", names)
	}
}
