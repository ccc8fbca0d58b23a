package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shmloader/shmloader/shm"
	"go.yaml.in/yaml/v3"
)

// Load reads and parses the config file at path. Like Parse, it does not run Validate.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes a config file; name is the file's name in errors. Keys left out keep
// their Default; every value is checked on its own (type, range, op, dtype, names) and
// errors are *Error with the file, line and key path. Checks across keys and of required
// keys are Validate's, which the caller runs after command-line overrides (Set).
func Parse(data []byte, name string) (*Config, error) {
	root, err := document(data, name)
	if err != nil {
		return nil, err
	}
	c := Default()
	c.Source = name
	c.Lines = map[string]int{}
	d := &decoder{file: name, lines: c.Lines}
	if err := d.fields(root, "", d.topFields(&c)); err != nil {
		return nil, err
	}
	if len(c.Outputs) > 0 {
		// Rules across outputs (a pad's length tensor taking another output's name).
		if err := c.checkOutputs(); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// document parses data into the root node of its single YAML document.
func document(data []byte, name string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, &Error{File: name, Err: errors.New("empty config: want a mapping with at least dataset and outputs")}
	} else if err != nil {
		return nil, syntaxError(name, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, &Error{File: name, Line: next.Line, Err: errors.New("a second YAML document: one config per file")}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{File: name, Line: doc.Line, Err: errors.New("want one YAML document")}
	}
	return doc.Content[0], nil
}

// topFields lists the keys of a config file in the order of default.yaml.
func (d *decoder) topFields(c *Config) []field {
	ints := map[string]intKey{}
	for _, k := range c.intKeys() {
		ints[k.path] = k
	}
	return []field{
		{"dataset", func(n *yaml.Node, p string) error {
			s, err := d.str(n, p)
			if err != nil {
				return err
			}
			if s == "" {
				return d.fail(n, p, "must not be empty")
			}
			c.Dataset = s
			return nil
		}},
		{"job", func(n *yaml.Node, p string) error {
			s, err := d.str(n, p)
			if err != nil {
				return err
			}
			if err := shm.ValidateJob(s); err != nil {
				return &Error{File: d.file, Line: n.Line, Path: p, Err: err}
			}
			c.Job = s
			return nil
		}},
		{"batch_size", d.intInto(ints["batch_size"])},
		{"seed", d.uintInto(&c.Seed)},
		{"epochs", d.uintInto(&c.Epochs)},
		{"shuffle", func(n *yaml.Node, p string) error {
			return d.fields(n, p, []field{
				{"row_groups", d.boolInto(&c.Shuffle.RowGroups)},
				{"window", d.intInto(ints["shuffle.window"])},
			})
		}},
		{"drop_last", d.boolInto(&c.DropLast)},
		{"partitions", d.intInto(ints["partitions"])},
		{"ranks", d.intInto(ints["ranks"])},
		{"node", func(n *yaml.Node, p string) error {
			return d.fields(n, p, []field{
				{"rank", d.intInto(ints["node.rank"])},
				{"count", d.intInto(ints["node.count"])},
			})
		}},
		{"ring_depth", d.intInto(ints["ring_depth"])},
		{"workers", d.intInto(ints["workers"])},
		{"prefetch", d.intInto(ints["prefetch"])},
		{"cache", func(n *yaml.Node, p string) error {
			return d.fields(n, p, []field{
				{"dir", func(n *yaml.Node, p string) (err error) {
					c.Cache.Dir, err = d.str(n, p)
					return err
				}},
				{"size", func(n *yaml.Node, p string) (err error) {
					c.Cache.Size, err = d.bytes(n, p)
					return err
				}},
				{"shards", d.intInto(ints["cache.shards"])},
			})
		}},
		{"progress", func(n *yaml.Node, p string) (err error) {
			c.Progress, err = d.duration(n, p)
			return err
		}},
		{"detach_grace", func(n *yaml.Node, p string) (err error) {
			c.DetachGrace, err = d.wait(n, p)
			return err
		}},
		{"start_grace", func(n *yaml.Node, p string) (err error) {
			c.StartGrace, err = d.wait(n, p)
			return err
		}},
		{"filter", func(n *yaml.Node, p string) (err error) {
			c.Filter, err = d.filter(n, p)
			return err
		}},
		{"outputs", func(n *yaml.Node, p string) (err error) {
			c.Outputs, err = d.outputs(n, p)
			return err
		}},
	}
}

func (d *decoder) intInto(k intKey) func(*yaml.Node, string) error {
	return func(n *yaml.Node, p string) error {
		v, err := d.integer(n, p)
		if err != nil {
			return err
		}
		if msg := k.problem(v); msg != "" {
			return d.fail(n, p, "%s", msg)
		}
		*k.p = int(v)
		return nil
	}
}

func (d *decoder) uintInto(dst *uint64) func(*yaml.Node, string) error {
	return func(n *yaml.Node, p string) (err error) {
		*dst, err = d.unsigned(n, p)
		return err
	}
}

func (d *decoder) boolInto(dst *bool) func(*yaml.Node, string) error {
	return func(n *yaml.Node, p string) (err error) {
		*dst, err = d.boolean(n, p)
		return err
	}
}

// Set overrides one scalar key, e.g. Set("node.rank", "3") for a command-line flag. The
// value is read as YAML and checked by the same rules as in a file; its line is
// forgotten, so that a later error blames the flag's value, not the file. Run Validate
// after the last Set.
func (c *Config) Set(key, value string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return &Error{Path: key, Err: fmt.Errorf("cannot read %q as a value", value)}
	}
	leaf := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str"}
	if len(doc.Content) == 1 {
		leaf = doc.Content[0]
	}
	if leaf.Kind != yaml.ScalarNode {
		return &Error{Path: key, Err: fmt.Errorf("want a single value, got %s", describe(leaf))}
	}
	leaf.Line = 0
	n := leaf
	parts := strings.Split(key, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: parts[i]}
		n = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, n}}
	}
	d := &decoder{lines: map[string]int{}}
	if err := d.fields(n, "", d.topFields(c)); err != nil {
		return err
	}
	delete(c.Lines, key)
	return nil
}
