package config

import (
	"fmt"

	"github.com/shmloader/shmloader/ring"
	"go.yaml.in/yaml/v3"
)

// LenSuffix names the extra tensor of a padded output: "<output>_len" holds each row's
// list length.
const LenSuffix = "_len"

// outputs reads the outputs mapping: name -> output, in file order. An output is a
// mapping {columns, dtype, transforms}, or just its columns (a pattern or a list).
func (d *decoder) outputs(n *yaml.Node, path string) ([]Output, error) {
	var outs []Output
	err := d.each(n, path, "a mapping of output names to outputs", func(name string, k, v *yaml.Node) error {
		p := join(path, name)
		d.lines[p] = k.Line
		if msg := tensorNameProblem(name); msg != "" {
			return d.fail(k, p, "output name: %s", msg)
		}
		o := Output{Name: name, Line: k.Line}
		var err error
		if v.Kind == yaml.MappingNode {
			err = d.fields(v, p, []field{
				{"columns", func(n *yaml.Node, p string) (err error) {
					o.Columns, err = d.columns(n, p)
					return err
				}},
				{"dtype", func(n *yaml.Node, p string) error {
					s, err := d.str(n, p)
					if err == nil {
						o.DType, err = d.dtype(n, p, s)
					}
					return err
				}},
				{"transforms", func(n *yaml.Node, p string) (err error) {
					o.Transforms, err = d.transforms(n, p)
					return err
				}},
			})
			if err == nil && len(o.Columns) == 0 {
				err = d.fail(v, p, "columns: required")
			}
		} else {
			o.Columns, err = d.columns(v, p)
		}
		if err == nil {
			if msg := o.problem(); msg != "" {
				err = d.fail(v, p, "%s", msg)
			}
		}
		outs = append(outs, o)
		return err
	})
	if err == nil && len(outs) == 0 {
		err = d.fail(n, path, "at least one output is required")
	}
	return outs, err
}

// columns reads one pattern or a list of them.
func (d *decoder) columns(n *yaml.Node, path string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := d.str(n, path)
		if err == nil && s == "" {
			err = d.fail(n, path, "empty column name")
		}
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, d.fail(n, path, "want a column pattern or a non-empty list of them, got %s", describe(n))
	}
	var out []string
	seen := map[string]int{}
	err := d.seq(n, path, func(_ int, item *yaml.Node, p string) error {
		s, err := d.str(item, p)
		if err != nil {
			return err
		}
		if s == "" {
			return d.fail(item, p, "empty column name")
		}
		if first, dup := seen[s]; dup {
			return d.fail(item, p, "%q listed twice (first at line %d)", s, first)
		}
		seen[s] = item.Line
		out = append(out, s)
		return nil
	})
	return out, err
}

// dtype checks a dtype name and returns it in its canonical spelling.
func (d *decoder) dtype(n *yaml.Node, path, s string) (string, error) {
	t, err := ParseDType(s)
	if err != nil {
		return "", &Error{File: d.file, Line: n.Line, Path: path, Err: err}
	}
	return t.String(), nil
}

// problem says what is wrong with the output on its own, or "".
func (o *Output) problem() string {
	if msg := tensorNameProblem(o.Name); msg != "" {
		return "output name: " + msg
	}
	if len(o.Columns) == 0 {
		return "no columns"
	}
	if o.DType != "" {
		if _, err := ParseDType(o.DType); err != nil {
			return "dtype: " + err.Error()
		}
	}
	pads := 0
	for _, t := range o.Transforms {
		if t.Op == OpPad {
			pads++
		}
	}
	switch {
	case pads > 1:
		return "pad given more than once"
	case pads == 1 && len(o.Name)+len(LenSuffix) > ring.MaxName:
		return fmt.Sprintf("output name: %q is too long for its length tensor %q (at most %d characters)",
			o.Name, o.Name+LenSuffix, ring.MaxName)
	}
	return ""
}

// padded says whether the output has a pad step, which adds the tensor Name+LenSuffix.
func (o *Output) padded() bool {
	for _, t := range o.Transforms {
		if t.Op == OpPad {
			return true
		}
	}
	return false
}

// tensorNameProblem applies the ring's rule for tensor names (ring/spec.go), so a bad
// name fails at its line in the file instead of when the ring is created.
func tensorNameProblem(name string) string {
	if name == "" || len(name) > ring.MaxName {
		return fmt.Sprintf("%q: want 1..%d characters", name, ring.MaxName)
	}
	for _, c := range []byte(name) {
		ok := c == '_' || c == '.' || c == ':' || c == '/' || c == '-' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return fmt.Sprintf("%q: character %q not in [A-Za-z0-9_.:/-]", name, c)
		}
	}
	return ""
}
