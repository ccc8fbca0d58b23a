package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// PredOps lists the predicate ops in the order of default.yaml.
var PredOps = []string{PredEq, PredNe, PredLt, PredLe, PredGt, PredGe, PredIn, PredNotIn, PredNull, PredNotNull}

// filter reads the list of predicates {column, op, value | values}.
func (d *decoder) filter(n *yaml.Node, path string) ([]Predicate, error) {
	var out []Predicate
	err := d.seq(n, path, func(_ int, item *yaml.Node, p string) error {
		pr := Predicate{Line: item.Line}
		var hasValue, hasValues bool
		err := d.fields(item, p, []field{
			{"column", func(n *yaml.Node, p string) (err error) {
				pr.Column, err = d.str(n, p)
				return err
			}},
			{"op", func(n *yaml.Node, p string) (err error) {
				if pr.Op, err = d.str(n, p); err == nil && !knownPred(pr.Op) {
					err = d.fail(n, p, "unknown op %q%s (want one of %v)", pr.Op, didYouMean(pr.Op, PredOps), PredOps)
				}
				return err
			}},
			{"value", func(n *yaml.Node, p string) (err error) {
				hasValue = true
				pr.Value, err = d.scalar(n, p)
				return err
			}},
			{"values", func(n *yaml.Node, p string) error {
				hasValues = true
				if n.Kind != yaml.SequenceNode {
					return d.fail(n, p, "want a list, got %s", describe(n))
				}
				pr.Values = []Scalar{}
				return d.seq(n, p, func(_ int, item *yaml.Node, p string) error {
					s, err := d.scalar(item, p)
					pr.Values = append(pr.Values, s)
					return err
				})
			}},
		})
		if err != nil {
			return err
		}
		switch {
		case pr.Column == "":
			return d.fail(item, p, "column: required")
		case pr.Op == "":
			return d.fail(item, p, "op: required (one of %v)", PredOps)
		case pr.Op == PredIn || pr.Op == PredNotIn:
			if hasValue || !hasValues {
				return d.fail(item, p, "op %q takes a list: values: [...]", pr.Op)
			}
		case pr.Op == PredNull || pr.Op == PredNotNull:
			if hasValue || hasValues {
				return d.fail(item, p, "op %q takes no value", pr.Op)
			}
		default:
			if hasValues || !hasValue {
				return d.fail(item, p, "op %q takes one value: value: ...", pr.Op)
			}
		}
		if msg := pr.problem(); msg != "" {
			return d.fail(item, p, "%s", msg)
		}
		out = append(out, pr)
		return nil
	})
	return out, err
}

func knownPred(op string) bool {
	for _, o := range PredOps {
		if o == op {
			return true
		}
	}
	return false
}

// problem says what is wrong with the predicate, or "". Whether Value was given cannot
// be told from the struct (0 is a value); Parse checks that, this checks the rest.
func (p *Predicate) problem() string {
	switch {
	case p.Column == "":
		return "column: required"
	case !knownPred(p.Op):
		return fmt.Sprintf("unknown op %q (want one of %v)", p.Op, PredOps)
	case p.Op == PredIn || p.Op == PredNotIn:
		if len(p.Values) == 0 {
			return fmt.Sprintf("op %q needs at least one of values", p.Op)
		}
		for i, v := range p.Values {
			if v.IsStr != p.Values[0].IsStr {
				return fmt.Sprintf("values[%d]: mixes strings and numbers", i)
			}
			if !v.IsStr && !finite(v.Num) {
				return fmt.Sprintf("values[%d]: must be finite", i)
			}
		}
	case p.Op == PredNull || p.Op == PredNotNull:
		if len(p.Values) > 0 {
			return fmt.Sprintf("op %q takes no values", p.Op)
		}
	default:
		if len(p.Values) > 0 {
			return fmt.Sprintf("op %q takes value, not values", p.Op)
		}
		if !p.Value.IsStr && !finite(p.Value.Num) {
			return "value must be finite"
		}
	}
	return ""
}
