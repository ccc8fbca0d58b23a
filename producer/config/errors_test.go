package config

import (
	"errors"
	"strings"
	"testing"
)

// parseErrors are files that Parse must reject, each with the start of the error: the
// line, the key path and the message.
var parseErrors = []struct{ name, yaml, want string }{
	{"unknown key", "dataset: d\nbatchsize: 5\n", `t.yaml:2: unknown key "batchsize" (did you mean "batch_size"?)`},
	{"unknown key case", "BatchSize: 5\n", `t.yaml:1: unknown key "BatchSize" (did you mean "batch_size"?)`},
	{"unknown nested key", "shuffle:\n  windw: 3\n", `t.yaml:2: shuffle: unknown key "windw" (did you mean "window"?)`},
	{"unknown key far", "zzz: 1\n", `t.yaml:1: unknown key "zzz"`},
	{"duplicate key", "seed: 1\nseed: 2\n", `t.yaml:2: key "seed" given twice (first at line 1)`},
	{"key not a name", "? [a]\n: 1\n", `t.yaml:1: want a name as key, got a list`},
	{"root not mapping", "- a\n", `t.yaml:1: want a mapping, got a list`},
	{"empty file", "", `t.yaml: empty config`},
	{"comments only", "# nothing\n", `t.yaml: empty config`},
	{"two documents", "seed: 1\n---\nseed: 2\n", `t.yaml:2: a second YAML document`},
	{"syntax", "seed: 1\nfilter: [1, 2\n", `t.yaml:`},
	{"string for int", "batch_size: big\n", `t.yaml:1: batch_size: want an integer, got the string "big"`},
	{"float for int", "batch_size: 1.5\n", `t.yaml:1: batch_size: want an integer, got the number 1.5`},
	{"zero batch", "batch_size: 0\n", `t.yaml:1: batch_size: must be in 1..1073741824, got 0`},
	{"negative batch", "\nbatch_size: -1\n", `t.yaml:2: batch_size: must be in 1..1073741824, got -1`},
	{"negative seed", "seed: -3\n", `t.yaml:1: seed: must be >= 0, got -3`},
	{"huge seed", "seed: 18446744073709551616\n", `t.yaml:1: seed: want a non-negative integer, got the number`},
	{"string epochs", "epochs: forever\n", `t.yaml:1: epochs: want a non-negative integer, got the string "forever"`},
	{"negative window", "shuffle:\n  row_groups: false\n  window: -1\n", `t.yaml:3: shuffle.window: must be in 0..1048576, got -1`},
	{"shuffle scalar", "shuffle: true\n", `t.yaml:1: shuffle: want a mapping, got the boolean true`},
	{"yes is not a bool", "drop_last: yes\n", `t.yaml:1: drop_last: want true or false, got the string "yes"`},
	{"zero ranks", "ranks: 0\n", `t.yaml:1: ranks: must be in 1..4096, got 0`},
	{"node count", "node: {rank: 0, count: 0}\n", `t.yaml:1: node.count: must be in 1..1048576, got 0`},
	{"node rank", "node:\n  rank: -1\n", `t.yaml:2: node.rank: must be in 0..1048575, got -1`},
	{"ring depth", "ring_depth: 1\n", `t.yaml:1: ring_depth: must be in 2..65536, got 1`},
	{"workers", "workers: -2\n", `t.yaml:1: workers: must be in 0..65536, got -2`},
	{"prefetch", "prefetch: -1\n", `t.yaml:1: prefetch: must be in 0..1024, got -1`},
	{"duration words", "progress: 5 seconds\n", `t.yaml:1: progress: want a duration like 5s or 500ms, got "5 seconds"`},
	{"duration number", "progress: 5\n", `t.yaml:1: progress: want a duration like 5s or 500ms, got the number 5`},
	{"negative duration", "progress: -1s\n", `t.yaml:1: progress: must be >= 0, got -1s`},
	{"empty dataset", "dataset: \"\"\n", `t.yaml:1: dataset: must not be empty`},
	{"dataset list", "dataset: [a, b]\n", `t.yaml:1: dataset: want a string, got a list`},
	{"bad job", "job: -x\n", `t.yaml:1: job: invalid job name "-x"`},
	{"job char", "job: a b\n", `t.yaml:1: job: invalid job name "a b": character ' '`},

	{"filter mapping", "filter: {column: a}\n", `t.yaml:1: filter: want a list, got a mapping`},
	{"filter bad op", "filter:\n  - {column: a, op: not_nul}\n", `t.yaml:2: filter[0].op: unknown op "not_nul" (did you mean "not_null"?)`},
	{"filter no value", "filter:\n  - {column: a, op: \"<\"}\n", `t.yaml:2: filter[0]: op "<" takes one value`},
	{"filter values for ==", "filter:\n  - {column: a, op: \"==\", values: [1]}\n", `t.yaml:2: filter[0]: op "==" takes one value`},
	{"filter in value", "filter:\n  - {column: a, op: in, value: 1}\n", `t.yaml:2: filter[0]: op "in" takes a list`},
	{"filter in empty", "filter:\n  - {column: a, op: not_in, values: []}\n", `t.yaml:2: filter[0]: op "not_in" needs at least one of values`},
	{"filter null value", "filter:\n  - {column: a, op: is_null, value: 1}\n", `t.yaml:2: filter[0]: op "is_null" takes no value`},
	{"filter no column", "filter:\n  - {op: not_null}\n", `t.yaml:2: filter[0]: column: required`},
	{"filter no op", "filter:\n  - {column: a}\n", `t.yaml:2: filter[0]: op: required`},
	{"filter mixed", "filter:\n  - {column: a, op: in, values: [1, \"x\"]}\n", `t.yaml:2: filter[0]: values[1]: mixes strings and numbers`},
	{"filter bool", "filter:\n  - column: a\n    op: \"==\"\n    value: true\n", `t.yaml:4: filter[0].value: want a number or a string, got the boolean true`},
	{"filter nan", "filter:\n  - {column: a, op: \">\", value: .nan}\n", `t.yaml:2: filter[0].value: want a finite number, got .nan`},
	{"filter unknown key", "filter:\n  - {column: a, op: in, valeus: [1]}\n", `t.yaml:2: filter[0]: unknown key "valeus" (did you mean "values"?)`},

	{"outputs empty", "outputs: {}\n", `t.yaml:1: outputs: at least one output is required`},
	{"outputs null", "outputs:\n", `t.yaml:1: outputs: want a mapping of output names to outputs, got nothing (null)`},
	{"outputs list", "outputs: [a]\n", `t.yaml:1: outputs: want a mapping of output names to outputs, got a list`},
	{"duplicate output", "outputs:\n  a: x\n  a: y\n", `t.yaml:3: outputs: key "a" given twice (first at line 2)`},
	{"output name char", "outputs:\n  bad name: x\n", `t.yaml:2: outputs.bad name: output name: "bad name": character ' ' not in [A-Za-z0-9_.:/-]`},
	{"output name long", "outputs:\n  " + strings.Repeat("n", 48) + ": x\n", `t.yaml:2: outputs.nnnn`},
	{"output no columns", "outputs:\n  a: {dtype: float32}\n", `t.yaml:2: outputs.a: columns: required`},
	{"output unknown key", "outputs:\n  a: {column: x}\n", `t.yaml:2: outputs.a: unknown key "column" (did you mean "columns"?)`},
	{"output empty columns", "outputs:\n  a: {columns: []}\n", `t.yaml:2: outputs.a.columns: want a column pattern or a non-empty list`},
	{"output repeated column", "outputs:\n  a:\n    columns:\n      - x\n      - x\n", `t.yaml:5: outputs.a.columns[1]: "x" listed twice (first at line 4)`},
	{"output dtype", "outputs:\n  a: {columns: x, dtype: float33}\n", `t.yaml:2: outputs.a.dtype: unknown dtype "float33" (did you mean "float32"?)`},

	{"two ops", "outputs:\n  a:\n    columns: x\n    transforms:\n      - {fill_null: 0, clip: {min: 0}}\n", `t.yaml:5: outputs.a.transforms[0]: one op per step, got "fill_null" and "clip"`},
	{"unknown op", tr("- normalise: {}"), `t.yaml:5: outputs.a.transforms[0]: unknown transform "normalise" (did you mean "normalize"?)`},
	{"transforms mapping", "outputs:\n  a:\n    columns: x\n    transforms: {log1p: {}}\n", `t.yaml:4: outputs.a.transforms: want a list, got a mapping`},
	{"bare op with args", tr("- cast"), "t.yaml:5: outputs.a.transforms[0].cast: needs arguments, e.g. `cast: int32`"},
	{"null args", tr("- clip:"), "t.yaml:5: outputs.a.transforms[0].clip: needs arguments"},
	{"cast dtype", tr("- cast: {dtype: int31}"), `t.yaml:5: outputs.a.transforms[0].cast.dtype: unknown dtype "int31"`},
	{"fill bool", tr("- fill_null: true"), `t.yaml:5: outputs.a.transforms[0].fill_null: want a number or a string, got the boolean true`},
	{"std zero", tr("- log1p\n      - normalize: {mean: 1, std: 0}"), `t.yaml:6: outputs.a.transforms[1].normalize: std must be > 0, got 0`},
	{"std list", tr("- normalize: {std: [1, -1]}"), `t.yaml:5: outputs.a.transforms[0].normalize: std[1] must be > 0, got -1`},
	{"mean std lengths", tr("- normalize: {mean: [1, 2], std: [1, 2, 3]}"), `t.yaml:5: outputs.a.transforms[0].normalize: 2 means but 3 stds`},
	{"mean string", tr("- normalize:\n          mean: [0, a]"), `t.yaml:6: outputs.a.transforms[0].normalize.mean[1]: want a number, got the string "a"`},
	{"mean empty", tr("- normalize: {mean: []}"), `t.yaml:5: outputs.a.transforms[0].normalize.mean: want a number or a non-empty list`},
	{"normalize scalar", tr("- normalize: 3"), `t.yaml:5: outputs.a.transforms[0].normalize: want a mapping, got the number 3`},
	{"clip empty", tr("- clip: {}"), `t.yaml:5: outputs.a.transforms[0].clip: give min, max or both`},
	{"clip order", tr("- clip: {min: 5, max: -5}"), `t.yaml:5: outputs.a.transforms[0].clip: min 5 is greater than max -5`},
	{"clip inf", tr("- clip: {max: .inf}"), `t.yaml:5: outputs.a.transforms[0].clip.max: want a finite number, got .inf`},
	{"log1p args", tr("- log1p: 3"), `t.yaml:5: outputs.a.transforms[0].log1p: takes no arguments, got the number 3`},
	{"boundaries order", tr("- bucketize: [0, 1, 1]"), `t.yaml:5: outputs.a.transforms[0].bucketize: boundaries must be strictly increasing: [2] = 1 after 1`},
	{"boundaries scalar", tr("- bucketize: 3"), `t.yaml:5: outputs.a.transforms[0].bucketize: want a list of boundaries, got the number 3`},
	{"boundaries empty", tr("- bucketize: {boundaries: []}"), `t.yaml:5: outputs.a.transforms[0].bucketize.boundaries: want a number or a non-empty list`},
	{"buckets zero", tr("- hash_bucket: 0"), `t.yaml:5: outputs.a.transforms[0].hash_bucket: buckets must be >= 1`},
	{"buckets negative", tr("- hash_bucket: {buckets: -4}"), `t.yaml:5: outputs.a.transforms[0].hash_bucket.buckets: must be >= 0, got -4`},
	{"buckets missing", tr("- hash_bucket: {seed: 3}"), `t.yaml:5: outputs.a.transforms[0].hash_bucket: buckets must be >= 1`},
	{"pad zero", tr("- pad: {length: 0}"), `t.yaml:5: outputs.a.transforms[0].pad.length: must be in 1..1048576, got 0`},
	{"pad short zero", tr("- pad: 0"), `t.yaml:5: outputs.a.transforms[0].pad: must be in 1..1048576, got 0`},
	{"pad no length", tr("- pad: {value: 1}"), `t.yaml:5: outputs.a.transforms[0].pad: length must be in 1..1048576, got 0`},
	{"pad value", tr("- pad: {length: 4, value: x}"), `t.yaml:5: outputs.a.transforms[0].pad.value: want a number, got the string "x"`},
	{"pad twice", tr("- pad: 4\n      - pad: 8"), `t.yaml:6: outputs.a.transforms[1].pad: pad given twice (first at line 5)`},
	{"pad name taken", "outputs:\n  a: {columns: x, transforms: [pad: 4]}\n  a_len: y\n", `t.yaml:3: outputs.a_len: name taken by the length tensor of output "a"`},
	{"datetime part", tr("- datetime: hours"), `t.yaml:5: outputs.a.transforms[0].datetime: unknown part "hours" (did you mean "hour"?)`},
	{"datetime no part", tr("- datetime: {tz: UTC}"), `t.yaml:5: outputs.a.transforms[0].datetime: part "": want one of`},
	{"datetime tz", tr("- datetime:\n          part: hour\n          tz: Mars/Olympus"), `t.yaml:7: outputs.a.transforms[0].datetime.tz: unknown time zone "Mars/Olympus"`},
	{"datetime tz local", tr("- datetime: {part: day, tz: Local}"), `t.yaml:5: outputs.a.transforms[0].datetime.tz: time zone "Local" would depend on the host`},
	{"datetime tz offset", tr("- datetime: {part: day, tz: \"+24:00\"}"), `t.yaml:5: outputs.a.transforms[0].datetime.tz: time zone offset "+24:00"`},
	{"datetime not first", tr("- fill_null: 0\n      - datetime: hour"), `t.yaml:6: outputs.a.transforms[1].datetime: datetime must be the first step`},
	{"datetime bare", tr("- datetime"), "t.yaml:5: outputs.a.transforms[0].datetime: needs arguments, e.g. `datetime: hour`"},
	{"decimal word", tr("- decimal: scaled"), "t.yaml:5: outputs.a.transforms[0].decimal: want `unscaled` or {scale: N}, got the string \"scaled\""},
	{"decimal no scale", tr("- decimal: {}"), "t.yaml:5: outputs.a.transforms[0].decimal: needs scale"},
	{"decimal scale", tr("- decimal: {scale: 77}"), `t.yaml:5: outputs.a.transforms[0].decimal.scale: must be in 0..76, got 77`},
	{"decimal not first", tr("- clip: {min: 0}\n      - decimal: unscaled"), `t.yaml:6: outputs.a.transforms[1].decimal: decimal must be the first step`},
	{"pad name long", "outputs:\n  " + strings.Repeat("n", 45) + ": {columns: x, transforms: [pad: 4]}\n", `t.yaml:2: outputs.nnnn`},
}

// tr is a config whose output "a" has the transform steps s, the first on line 5.
func tr(s string) string {
	return "outputs:\n  a:\n    columns: x\n    transforms:\n      " + s + "\n"
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrors {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml), "t.yaml")
			if err == nil {
				t.Fatalf("parsed %+v, want error %q", c, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error\n  %s\nwant it to start with\n  %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error", err)
			}
		})
	}
}

// TestDemoFileError checks a realistic file: the line and path of an error deep inside.
func TestDemoFileError(t *testing.T) {
	_, err := Load("testdata/demo_bad_std.yaml")
	want := "testdata/demo_bad_std.yaml:14: outputs.features.transforms[1].normalize: std must be > 0, got 0"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("testdata/no such file.yaml"); err == nil || !strings.Contains(err.Error(), "no such file.yaml") {
		t.Fatalf("got %v, want an error naming the file", err)
	}
}
