package config

import (
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// keyFields maps every key path of the grammar ("[]" for any list index, "*" for any
// output name) to the struct fields it sets; container and list-item paths set none.
var keyFields = map[string][]string{
	"dataset": {"Config.Dataset"}, "job": {"Config.Job"}, "batch_size": {"Config.BatchSize"},
	"seed": {"Config.Seed"}, "epochs": {"Config.Epochs"}, "shuffle": {"Config.Shuffle"},
	"shuffle.row_groups": {"Shuffle.RowGroups"}, "shuffle.window": {"Shuffle.Window"},
	"drop_last": {"Config.DropLast"}, "partitions": {"Config.Partitions"}, "ranks": {"Config.Ranks"}, "node": {"Config.Node"},
	"cache": {"Config.Cache"}, "cache.dir": {"Cache.Dir"}, "cache.size": {"Cache.Size"}, "cache.shards": {"Cache.Shards"},
	"node.rank": {"Node.Rank"}, "node.count": {"Node.Count"}, "ring_depth": {"Config.RingDepth"},
	"workers": {"Config.Workers"}, "prefetch": {"Config.Prefetch"}, "progress": {"Config.Progress"},
	"detach_grace": {"Config.DetachGrace"}, "start_grace": {"Config.StartGrace"},

	"filter": {"Config.Filter"}, "filter[]": nil, "filter[].column": {"Predicate.Column"},
	"filter[].op": {"Predicate.Op"}, "filter[].value": {"Predicate.Value"},
	"filter[].values": {"Predicate.Values"}, "filter[].values[]": nil,

	"outputs": {"Config.Outputs"}, "outputs.*": {"Output.Name", "Output.Columns"},
	"outputs.*.columns": {"Output.Columns"}, "outputs.*.columns[]": nil, "outputs.*.dtype": {"Output.DType"},
	"outputs.*.transforms": {"Output.Transforms"}, "outputs.*.transforms[]": {"Transform.Op"},
	tk("cast"): {"Transform.Op", "Transform.DType"}, tk("cast.dtype"): {"Transform.DType"},
	tk("fill_null"): {"Transform.Op", "Transform.Fill"}, tk("fill_null.value"): {"Transform.Fill"},
	tk("normalize"): {"Transform.Op"}, tk("normalize.mean"): {"Transform.Mean"}, tk("normalize.mean[]"): nil,
	tk("normalize.std"): {"Transform.Std"}, tk("normalize.std[]"): nil,
	tk("clip"): {"Transform.Op"}, tk("clip.min"): {"Transform.Min", "Transform.MinExact"}, tk("clip.max"): {"Transform.Max", "Transform.MaxExact"},
	tk("log1p"):     {"Transform.Op"},
	tk("bucketize"): {"Transform.Op", "Transform.Boundaries"}, tk("bucketize[]"): nil,
	tk("bucketize.boundaries"): {"Transform.Boundaries"}, tk("bucketize.boundaries[]"): nil,
	tk("hash_bucket"): {"Transform.Op", "Transform.Buckets"}, tk("hash_bucket.buckets"): {"Transform.Buckets"},
	tk("hash_bucket.seed"): {"Transform.HashSeed"},
	tk("pad"):              {"Transform.Op", "Transform.Length"}, tk("pad.length"): {"Transform.Length"},
	tk("pad.value"): {"Transform.PadValue", "Transform.PadExact"},
	tk("datetime"):  {"Transform.Op", "Transform.Part"}, tk("datetime.part"): {"Transform.Part"},
	tk("datetime.tz"): {"Transform.TZ"},
	tk("decimal"):     {"Transform.Op", "Transform.Unscaled"}, tk("decimal.scale"): {"Transform.Scale"},
}

func tk(s string) string { return "outputs.*.transforms[]." + s }

var index = regexp.MustCompile(`\[\d+\]`)

// generic turns "outputs.cats.transforms[0].hash_bucket" into "outputs.*.transforms[].hash_bucket".
func generic(path string) string {
	path = index.ReplaceAllString(path, "[]")
	if rest, ok := strings.CutPrefix(path, "outputs."); ok {
		_, after, found := strings.Cut(rest, ".")
		path = "outputs.*"
		if found {
			path += "." + after
		}
	}
	return path
}

// withExamples is DefaultYAML with its commented-out examples switched on: a comment
// line "# key:" at the start of a line, followed by the lines "#  ..." of its value,
// replaces the "key: ..." line that comes after them. It fails the test if there is no
// example, or an example is not followed by its key.
func withExamples(t testing.TB) string {
	t.Helper()
	start := regexp.MustCompile(`^# ([a-z_]+):$`)
	lines := strings.Split(DefaultYAML, "\n")
	var out []string
	examples := 0
	for i := 0; i < len(lines); i++ {
		m := start.FindStringSubmatch(lines[i])
		if m == nil {
			out = append(out, lines[i])
			continue
		}
		out = append(out, m[1]+":")
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#  ") {
			i++
			out = append(out, lines[i][2:])
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], m[1]+":") {
			t.Fatalf("default.yaml:%d: the example of %s is not followed by the line of %s", i+1, m[1], m[1])
		}
		i++ // the key's own line, which the example replaces
		examples++
	}
	if examples == 0 {
		t.Fatal("default.yaml has no commented-out example")
	}
	return strings.Join(out, "\n")
}

// TestDefaultYAMLServesEveryRow: what --print-config prints keeps every row (no filter),
// and its commented-out filter example is valid.
func TestDefaultYAMLServesEveryRow(t *testing.T) {
	c := mustParse(t, DefaultYAML)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Filter) != 0 {
		t.Errorf("default.yaml has an active filter: %+v", c.Filter)
	}
	ex := mustParse(t, withExamples(t))
	if err := ex.Validate(); err != nil {
		t.Fatalf("default.yaml with its examples: %v", err)
	}
	if len(ex.Filter) != 3 {
		t.Errorf("the filter example has %d predicates, want 3", len(ex.Filter))
	}
}

// TestDefaultYAMLCoversGrammar: every key of default.yaml (with its commented-out
// examples switched on) is in the grammar, every struct field is set by some key it
// writes, and the rest is documented in comments.
func TestDefaultYAMLCoversGrammar(t *testing.T) {
	c, err := Parse([]byte(withExamples(t)), "default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for k := range c.Lines {
		g := generic(k)
		written[g] = true
		if _, ok := keyFields[g]; !ok {
			t.Errorf("default.yaml key %q (%s) is missing from keyFields", k, g)
		}
	}
	set := map[string]bool{}
	for key, fields := range keyFields {
		for _, f := range fields {
			if written[key] {
				set[f] = true
			}
		}
		if !written[key] && !documented(key) {
			t.Errorf("key %q is neither written nor described in default.yaml", key)
		}
	}
	for _, typ := range []any{Config{}, Shuffle{}, Node{}, Output{}, Transform{}, Predicate{}} {
		rt := reflect.TypeOf(typ)
		for i := range rt.NumField() {
			name := rt.Name() + "." + rt.Field(i).Name
			switch rt.Field(i).Name {
			case "Lines", "Source", "Line":
				continue // where values came from, not values
			}
			if !set[name] {
				t.Errorf("field %s is set by no key that default.yaml writes", name)
			}
		}
	}
}

// documented: the key's last name appears in a comment of default.yaml as "name:".
func documented(key string) bool {
	key = strings.TrimSuffix(key, "[]")
	name := key[strings.LastIndexAny(key, ".")+1:]
	for _, line := range strings.Split(DefaultYAML, "\n") {
		if i := strings.Index(line, "#"); i >= 0 && strings.Contains(line[i:], name+":") {
			return true
		}
	}
	return false
}

// TestDefaultYAMLValues: the values default.yaml writes are the defaults it documents.
func TestDefaultYAMLValues(t *testing.T) {
	c, err := Parse([]byte(DefaultYAML), "default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := Default()
	d.Dataset, d.Filter, d.Outputs, d.Lines, d.Source = c.Dataset, c.Filter, c.Outputs, c.Lines, c.Source
	if !reflect.DeepEqual(*c, d) {
		t.Fatalf("default.yaml sets\n  %+v\nDefault() is\n  %+v", *c, d)
	}
	for _, k := range []string{"batch_size", "seed", "epochs", "shuffle.window", "drop_last", "partitions", "ranks",
		"node.count", "ring_depth", "workers", "prefetch", "progress", "detach_grace", "start_grace", "job"} {
		if c.Lines[k] == 0 {
			t.Errorf("default.yaml does not write %s", k)
		}
	}
}

// TestDefaultYAMLNamesEveryOp: the comments show every transform op, predicate op and dtype.
func TestDefaultYAMLNamesEveryOp(t *testing.T) {
	text := DefaultYAML
	var missing []string
	for _, op := range Ops {
		if !strings.Contains(text, "#     - "+op) {
			missing = append(missing, "transform "+op)
		}
	}
	for _, op := range PredOps {
		if !strings.Contains(text, `"`+op+`"`) && !strings.Contains(text, "op: "+op) && !strings.Contains(text, "also "+op) {
			missing = append(missing, "predicate "+op)
		}
	}
	for _, dt := range DTypeNames() {
		if !strings.Contains(text, " "+dt) {
			missing = append(missing, "dtype "+dt)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("default.yaml does not show: %v", missing)
	}
}

// TestDefaultYAMLExplainsEveryKey: every key of the settings (not the example outputs
// and filter) has a comment of its own.
func TestDefaultYAMLExplainsEveryKey(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(DefaultYAML), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			if k.HeadComment == "" && k.LineComment == "" && v.LineComment == "" {
				t.Errorf("default.yaml:%d: key %s has no comment", k.Line, p)
			}
			if v.Kind == yaml.MappingNode && p != "outputs" {
				walk(v, p)
			}
		}
	}
	walk(doc.Content[0], "")
}
