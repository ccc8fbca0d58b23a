package config

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// Ops lists the transform ops in the order of default.yaml.
var Ops = []string{OpCast, OpFillNull, OpNormalize, OpClip, OpLog1p, OpBucketize, OpHashBucket, OpPad, OpDatetime, OpDecimal}

// transforms reads a list of steps. A step is a mapping of exactly one op to its
// arguments ("- clip: {min: 0}"), or a bare op that takes none ("- log1p").
func (d *decoder) transforms(n *yaml.Node, path string) ([]Transform, error) {
	var out []Transform
	err := d.seq(n, path, func(_ int, item *yaml.Node, p string) error {
		var op, args *yaml.Node
		switch {
		case item.Kind == yaml.ScalarNode && item.ShortTag() == "!!str":
			op = item
		case item.Kind == yaml.MappingNode && len(item.Content) == 2:
			var err error
			if op, err = d.resolve(item.Content[0], p); err != nil {
				return err
			}
			if args, err = d.resolve(item.Content[1], p); err != nil {
				return err
			}
		case item.Kind == yaml.MappingNode && len(item.Content) > 2:
			return d.fail(item.Content[2], p, "one op per step, got %q and %q: start a new \"- \" item for each",
				item.Content[0].Value, item.Content[2].Value)
		default:
			return d.fail(item, p, "want an op such as `- clip: {min: 0}`, got %s", describe(item))
		}
		if !knownOp(op.Value) {
			return d.fail(op, p, "unknown transform %q%s (want one of %v)", op.Value, didYouMean(op.Value, Ops), Ops)
		}
		p = join(p, op.Value)
		d.lines[p] = op.Line
		t := Transform{Op: op.Value, Line: item.Line}
		if args != nil && isNull(args) {
			args = nil // "- log1p:" is "- log1p"
		}
		if args == nil && op.Value != OpLog1p {
			return d.fail(op, p, "needs arguments, e.g. %s", example[op.Value])
		}
		if args != nil {
			if err := d.args(&t, args, p); err != nil {
				return err
			}
		}
		if key, msg := t.problem(); msg != "" {
			at := op
			if line, ok := d.lines[join(p, key)]; ok && key != "" {
				at = &yaml.Node{Line: line} // the argument's own line
			}
			return d.fail(at, p, "%s", msg)
		}
		if len(out) > 0 && firstOnly(t.Op) {
			return d.fail(op, p, "%s must be the first step: it reads the column's stored values", t.Op)
		}
		for _, prev := range out {
			if prev.Op == OpPad && t.Op == OpPad {
				return d.fail(op, p, "pad given twice (first at line %d)", prev.Line)
			}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

func knownOp(s string) bool {
	for _, op := range Ops {
		if op == s {
			return true
		}
	}
	return false
}

// example shows the shortest form of each op, for errors.
var example = map[string]string{
	OpCast: "`cast: int32`", OpFillNull: "`fill_null: 0`", OpNormalize: "`normalize: {mean: 0, std: 1}`",
	OpClip: "`clip: {min: -5, max: 5}`", OpLog1p: "`log1p`", OpBucketize: "`bucketize: [-1, 0, 1]`",
	OpHashBucket: "`hash_bucket: 1000`", OpPad: "`pad: {length: 16}`",
	OpDatetime: "`datetime: hour`", OpDecimal: "`decimal: unscaled`",
}

// firstOnly says whether op reads a column's stored values (a timestamp's, a decimal's)
// and so must be an output's first step.
func firstOnly(op string) bool { return op == OpDatetime || op == OpDecimal }

// hasKey says whether mapping n has key k.
func hasKey(n *yaml.Node, k string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return true
		}
	}
	return false
}

// args reads the arguments of t.Op from n: a mapping of named arguments, or for most
// ops a shorthand for the main one (cast: int32, hash_bucket: 1000, pad: 16).
func (d *decoder) args(t *Transform, n *yaml.Node, p string) error {
	short := n.Kind != yaml.MappingNode
	switch t.Op {
	case OpCast:
		dtype := func(n *yaml.Node, p string) error {
			s, err := d.str(n, p)
			if err == nil {
				t.DType, err = d.dtype(n, p, s)
			}
			return err
		}
		if short {
			return dtype(n, p)
		}
		return d.fields(n, p, []field{{"dtype", dtype}})
	case OpFillNull:
		fill := func(n *yaml.Node, p string) (err error) { t.Fill, err = d.scalar(n, p); return err }
		if short {
			return fill(n, p)
		}
		return d.fields(n, p, []field{{"value", fill}})
	case OpNormalize:
		t.Mean, t.Std = []float64{0}, []float64{1}
		return d.fields(n, p, []field{
			{"mean", func(n *yaml.Node, p string) (err error) { t.Mean, err = d.numbers(n, p); return err }},
			{"std", func(n *yaml.Node, p string) (err error) { t.Std, err = d.numbers(n, p); return err }},
		})
	case OpClip:
		// Min and Max are pointers: a bound left out is no bound, not 0.
		bound := func(dst **float64, exact *Scalar) func(*yaml.Node, string) error {
			return func(n *yaml.Node, p string) error {
				v, err := d.scalar(n, p)
				if err == nil && v.IsStr {
					err = d.fail(n, p, "want a number, got %s", describe(n))
				}
				*dst, *exact = &v.Num, v
				return err
			}
		}
		return d.fields(n, p, []field{{"min", bound(&t.Min, &t.MinExact)}, {"max", bound(&t.Max, &t.MaxExact)}})
	case OpLog1p:
		if isNull(n) || (n.Kind == yaml.MappingNode && len(n.Content) == 0) {
			return nil
		}
		return d.fail(n, p, "takes no arguments, got %s", describe(n))
	case OpBucketize:
		bounds := func(n *yaml.Node, p string) (err error) {
			if n.Kind != yaml.SequenceNode {
				return d.fail(n, p, "want a list of boundaries, got %s", describe(n))
			}
			t.Boundaries, err = d.numbers(n, p)
			return err
		}
		if short {
			return bounds(n, p)
		}
		return d.fields(n, p, []field{{"boundaries", bounds}})
	case OpHashBucket:
		buckets := func(n *yaml.Node, p string) (err error) { t.Buckets, err = d.unsigned(n, p); return err }
		if short {
			return buckets(n, p)
		}
		return d.fields(n, p, []field{{"buckets", buckets},
			{"seed", func(n *yaml.Node, p string) (err error) { t.HashSeed, err = d.unsigned(n, p); return err }}})
	case OpPad:
		length := func(n *yaml.Node, p string) error {
			v, err := d.integer(n, p)
			if err == nil && (v < 1 || v > MaxPadLength) {
				err = d.fail(n, p, "must be in 1..%d, got %d", MaxPadLength, v)
			}
			t.Length = int(v)
			return err
		}
		if short {
			return length(n, p)
		}
		return d.fields(n, p, []field{{"length", length},
			{"value", func(n *yaml.Node, p string) error {
				v, err := d.scalar(n, p)
				if err == nil && v.IsStr {
					err = d.fail(n, p, "want a number, got %s", describe(n))
				}
				t.PadValue, t.PadExact = v.Num, v
				return err
			}}})
	case OpDatetime:
		part := func(n *yaml.Node, p string) error {
			s, err := d.str(n, p)
			if err == nil && !slices.Contains(DatetimeParts, s) {
				err = d.fail(n, p, "unknown part %q%s (want one of %v)", s, didYouMean(s, DatetimeParts), DatetimeParts)
			}
			t.Part = s
			return err
		}
		if short {
			return part(n, p)
		}
		return d.fields(n, p, []field{{"part", part},
			{"tz", func(n *yaml.Node, p string) error {
				s, err := d.str(n, p)
				if err == nil {
					if _, zerr := LoadZone(s); zerr != nil {
						err = d.fail(n, p, "%v", zerr)
					}
				}
				t.TZ = s
				return err
			}}})
	case OpDecimal:
		if short {
			s, err := d.str(n, p)
			if err == nil && s != "unscaled" {
				err = d.fail(n, p, "want `unscaled` or {scale: N}, got %s", describe(n))
			}
			t.Unscaled = true
			return err
		}
		if !hasKey(n, "scale") {
			return d.fail(n, p, "needs scale: want `unscaled` or {scale: N}")
		}
		return d.fields(n, p, []field{{"scale", func(n *yaml.Node, p string) error {
			v, err := d.integer(n, p)
			if err == nil && (v < 0 || v > MaxDecimalScale) {
				err = d.fail(n, p, "must be in 0..%d, got %d", MaxDecimalScale, v)
			}
			t.Scale = int(v)
			return err
		}}})
	}
	return nil
}
