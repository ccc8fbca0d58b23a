package config

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// decoder walks a yaml.Node tree into a Config. Working on nodes rather than on
// yaml.Unmarshal into structs is what gives every error its line and key path, tells an
// absent key from a zero one, and rejects unknown and repeated keys.
type decoder struct {
	file    string
	lines   map[string]int // filled with the line of every key path visited
	aliases int            // alias expansions so far, bounded by maxAliases
}

// maxAliases bounds alias expansions: anchors may share a list of transforms, but a
// small file of nested aliases must not expand into billions of nodes.
const maxAliases = 10000

// field is one known key of a mapping and how to decode its value.
type field struct {
	key    string
	decode func(n *yaml.Node, path string) error
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: d.file, Line: line, Path: path, Err: fmt.Errorf(format, args...)}
}

// resolve follows aliases to the node they name.
func (d *decoder) resolve(n *yaml.Node, path string) (*yaml.Node, error) {
	for n.Kind == yaml.AliasNode {
		d.aliases++
		if d.aliases > maxAliases {
			return nil, d.fail(n, path, "more than %d alias expansions", maxAliases)
		}
		if n.Alias == nil {
			return nil, d.fail(n, path, "alias *%s names no anchor", n.Value)
		}
		n = n.Alias
	}
	return n, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// each calls fn for every key of mapping n, in file order, with the value resolved.
// Keys must be scalars and appear once.
func (d *decoder) each(n *yaml.Node, path, want string, fn func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(n, path, "want %s, got %s", want, describe(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := d.resolve(n.Content[i], path)
		if err != nil {
			return err
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			return d.fail(k, path, "want a name as key, got %s", describe(k))
		}
		if first, dup := seen[k.Value]; dup {
			return d.fail(k, path, "key %q given twice (first at line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line
		v, err := d.resolve(n.Content[i+1], join(path, k.Value))
		if err != nil {
			return err
		}
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// fields decodes mapping n whose keys must be among fs.
func (d *decoder) fields(n *yaml.Node, path string, fs []field) error {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.key
	}
	return d.each(n, path, "a mapping", func(key string, k, v *yaml.Node) error {
		for _, f := range fs {
			if f.key == key {
				p := join(path, key)
				d.lines[p] = k.Line
				return f.decode(v, p)
			}
		}
		return d.fail(k, path, "unknown key %q%s", key, didYouMean(key, names))
	})
}

// seq calls fn for every item of list n, recording each item's line as "path[i]".
// A null value is an empty list, so that a key whose items are all commented out is valid.
func (d *decoder) seq(n *yaml.Node, path string, fn func(i int, item *yaml.Node, p string) error) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.fail(n, path, "want a list, got %s", describe(n))
	}
	for i, item := range n.Content {
		p := path + "[" + strconv.Itoa(i) + "]"
		item, err := d.resolve(item, p)
		if err != nil {
			return err
		}
		d.lines[p] = item.Line
		if err := fn(i, item, p); err != nil {
			return err
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names what a node is, for "want X, got Y" errors.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing (null)"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "an empty document"
}
