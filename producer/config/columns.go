package config

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// ExpandColumns resolves column patterns against names, the dataset's columns in schema
// order. A pattern is, in this order of precedence:
//   - an exact column name;
//   - a range "a..b" such as "f000..f099": a and b share a prefix and end in digits of
//     the same width; every name from a to b inclusive must be a column;
//   - a glob in path.Match syntax ("f0*", "c[01]?"), expanding in schema order.
//
// The result keeps the order of the patterns. A pattern that matches nothing, and a
// column named twice, are errors.
func ExpandColumns(patterns []string, names []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("no columns given")
	}
	exists := make(map[string]bool, len(names))
	for _, n := range names {
		exists[n] = true
	}
	var out []string
	by := map[string]string{} // column -> the pattern that took it
	for _, p := range patterns {
		cols, err := expandOne(p, names, exists)
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			if first, dup := by[c]; dup {
				return nil, fmt.Errorf("column %q listed twice (by %q and by %q)", c, first, p)
			}
			by[c] = p
			out = append(out, c)
		}
	}
	return out, nil
}

func expandOne(p string, names []string, exists map[string]bool) ([]string, error) {
	switch {
	case exists[p]:
		return []string{p}, nil
	case strings.Contains(p, ".."):
		return expandRange(p, len(names), exists)
	case strings.ContainsAny(p, `*?[\`):
		var out []string
		for _, n := range names {
			ok, err := path.Match(p, n)
			if err != nil {
				return nil, fmt.Errorf("column pattern %q: %w", p, err)
			}
			if ok {
				out = append(out, n)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("column pattern %q matches no column", p)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no column %q%s", p, didYouMean(p, names))
}

// expandRange expands "f000..f099". Bounding it by the number of columns keeps a typo
// like "f0..f99999999999" from running for hours before it reports the missing name.
func expandRange(p string, ncols int, exists map[string]bool) ([]string, error) {
	a, b, _ := strings.Cut(p, "..")
	pa, na, wa := splitNumber(a)
	pb, nb, wb := splitNumber(b)
	switch {
	case wa == 0 || wb == 0:
		return nil, fmt.Errorf("column range %q: both ends must end in digits", p)
	case pa != pb:
		return nil, fmt.Errorf("column range %q: ends have different prefixes %q and %q", p, pa, pb)
	case wa != wb:
		return nil, fmt.Errorf("column range %q: ends have %d and %d digits; write both with the same width", p, wa, wb)
	case na > nb:
		return nil, fmt.Errorf("column range %q: start is after end", p)
	case nb-na >= uint64(ncols):
		return nil, fmt.Errorf("column range %q spans %d names, the dataset has %d columns", p, nb-na+1, ncols)
	}
	out := make([]string, 0, nb-na+1)
	for i := na; i <= nb; i++ {
		name := fmt.Sprintf("%s%0*d", pa, wa, i)
		if !exists[name] {
			return nil, fmt.Errorf("column range %q: no column %q", p, name)
		}
		out = append(out, name)
	}
	return out, nil
}

// splitNumber splits "f007" into "f", 7 and the digit count 3 (0 when s has no
// trailing digits, or too many to be a column index).
func splitNumber(s string) (prefix string, n uint64, width int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	v, err := strconv.ParseUint(s[i:], 10, 64)
	if err != nil || len(s)-i > 18 {
		return s, 0, 0
	}
	return s[:i], v, len(s) - i
}

// ExpandOutputs resolves every output's columns against names (ExpandColumns), checks
// that per-column normalize lists fit, and that every filter column exists. It returns
// the columns of each output, in the order of Outputs. Errors carry the key's line.
func (c *Config) ExpandOutputs(names []string) ([][]string, error) {
	exists := map[string]bool{}
	for _, n := range names {
		exists[n] = true
	}
	for i, p := range c.Filter {
		if !exists[p.Column] {
			path := "filter[" + strconv.Itoa(i) + "]"
			return nil, c.errAt(path, "no column %q%s", p.Column, didYouMean(p.Column, names))
		}
	}
	out := make([][]string, len(c.Outputs))
	for i, o := range c.Outputs {
		base := "outputs." + o.Name
		cols, err := ExpandColumns(o.Columns, names)
		if err != nil {
			p := base + ".columns"
			if _, ok := c.Lines[p]; !ok {
				p = base // the shorthand "name: columns"
			}
			return nil, c.errAt(p, "%w", err)
		}
		for j, t := range o.Transforms {
			if t.Op != OpNormalize {
				continue
			}
			for _, l := range [][]float64{t.Mean, t.Std} {
				if len(l) > 1 && len(l) != len(cols) {
					return nil, c.errAt(transformPath(base, j, t.Op), "%d values in a list for %d columns", len(l), len(cols))
				}
			}
		}
		out[i] = cols
	}
	return out, nil
}
