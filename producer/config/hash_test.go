package config

import (
	"bytes"
	"testing"
)

func TestHashInput(t *testing.T) {
	base := withExamples(t) // the filter example too
	h0 := mustParse(t, base).HashInput()
	if !bytes.Equal(h0, mustParse(t, base).HashInput()) {
		t.Fatal("HashInput differs between two parses of one file")
	}
	// Keys that never change a byte a trainer receives, and the file's layout.
	same := []string{
		"job: other\n", "workers: 7\n", "prefetch: 3\n", "progress: 0\n", "ring_depth: 64\n",
		"epochs: 0\n", "dataset: elsewhere\n", "\n\n# a comment moves every line\n",
		"ranks: 3\n", // the layout: global batches are the same under every one
	}
	for _, s := range same {
		if h := mustParse(t, s+withoutKey(base, s)).HashInput(); !bytes.Equal(h, h0) {
			t.Errorf("%q changed the hash input", s)
		}
	}
	for _, e := range [][2]string{{"count: 1", "count: 2"}, {`dir: ""`, "dir: /tmp/c"}, {"size: 0", "size: 1GB"}, {"shards: 16", "shards: 4"}} {
		if h := mustParse(t, replaceOnce(t, base, e[0], e[1])).HashInput(); !bytes.Equal(h, h0) {
			t.Errorf("%q -> %q changed the hash input", e[0], e[1])
		}
	}
	// Keys that do change them.
	edits := [][2]string{
		{"\nseed: 0\n", "\nseed: 1\n"},
		{"\nbatch_size: 1024", "\nbatch_size: 512"},
		{"window: 4", "window: 2"},
		{"row_groups: true", "row_groups: false"},
		{"drop_last: true", "drop_last: false"},
		{"\npartitions: 0", "\npartitions: 4"},
		{`op: ">=", value: 0}`, `op: ">=", value: 1}`},
		{`values: ["<none>"]`, `values: ["<nil>"]`},
		{"mean: 0.0, std: 1.0", "mean: 0.0, std: 2.0"},
		{"clip: {min: -5, max: 5}\n", "clip: {min: -4, max: 5}\n"},
		{"hash_bucket: {buckets: 100000, seed: 0}", "hash_bucket: {buckets: 100000, seed: 1}"},
		{"      - bucketize: [-1, 0, 1]", "      - bucketize: [-1, 0, 2]"},
		{"      - cast: int32", "      - cast: int16"},
		{"      - pad: {length: 16, value: 0}", "      - pad: {length: 17, value: 0}"},
		{"      - log1p\n", "      - log1p\n      - log1p\n"},
		{`      - fill_null: ""`, `      - fill_null: "?"`},
		{"columns: [c00..c25]", "columns: [c00..c24]"},
		{"dtype: float32\n    transforms", "dtype: float16\n    transforms"},
		{"  ids: {columns: id}\n", ""},
	}
	for _, e := range edits {
		src := replaceOnce(t, base, e[0], e[1])
		if h := mustParse(t, src).HashInput(); bytes.Equal(h, h0) {
			t.Errorf("%q -> %q did not change the hash input", e[0], e[1])
		}
	}
	// A string "1" and a number 1 are different fill values.
	a := mustParse(t, tr(`- fill_null: "1"`)).HashInput()
	b := mustParse(t, tr(`- fill_null: 1`)).HashInput()
	if bytes.Equal(a, b) {
		t.Error(`fill_null "1" and 1 hash alike`)
	}
}

// withoutKey drops the line of base that sets the top-level key of kv, so kv can replace it.
func withoutKey(base, kv string) string {
	var key string
	for i := range len(kv) {
		if kv[i] == ':' {
			key = kv[:i+1]
			break
		}
	}
	if key == "" {
		return base
	}
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter([]byte(base), []byte("\n")) {
		if !bytes.HasPrefix(line, []byte(key)) {
			out.Write(line)
		}
	}
	return out.String()
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if bytes.Count([]byte(s), []byte(old)) != 1 {
		t.Fatalf("%q is not once in default.yaml", old)
	}
	return string(bytes.Replace([]byte(s), []byte(old), []byte(new), 1))
}

// RowHashInput, which keys cache entries, changes with what makes a row group's bytes
// and with nothing that only reorders rows.
func TestRowHashInput(t *testing.T) {
	base := withExamples(t) // the filter example too
	h0 := mustParse(t, base).RowHashInput()
	for _, e := range [][2]string{
		{"\nseed: 0\n", "\nseed: 1\n"}, {"\nbatch_size: 1024", "\nbatch_size: 512"}, {"window: 4", "window: 2"},
		{"drop_last: true", "drop_last: false"}, {"\npartitions: 0", "\npartitions: 4"}, {"count: 1", "count: 2"},
	} {
		if h := mustParse(t, replaceOnce(t, base, e[0], e[1])).RowHashInput(); !bytes.Equal(h, h0) {
			t.Errorf("%q -> %q changed the row hash input", e[0], e[1])
		}
	}
	for _, e := range [][2]string{
		{`op: ">=", value: 0}`, `op: ">=", value: 1}`}, {"mean: 0.0, std: 1.0", "mean: 0.0, std: 2.0"},
		{"columns: [c00..c25]", "columns: [c00..c24]"}, {"dtype: float32\n    transforms", "dtype: float16\n    transforms"},
	} {
		if h := mustParse(t, replaceOnce(t, base, e[0], e[1])).RowHashInput(); bytes.Equal(h, h0) {
			t.Errorf("%q -> %q did not change the row hash input", e[0], e[1])
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "123": 123, "1KB": 1000, "1.5GB": 1_500_000_000, "64GiB": 64 << 30, "2 TiB": 2 << 40, "10B": 10} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1XB", "GB", "1e30"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q): want an error", in)
		}
	}
}
