package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// str reads any non-null scalar as its text, so that `job: 42` is the job "42".
func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", d.fail(n, path, "want a string, got %s", describe(n))
	}
	return n.Value, nil
}

func (d *decoder) integer(n *yaml.Node, path string) (int64, error) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, d.fail(n, path, "want an integer, got %s", describe(n))
	}
	if err := n.Decode(&v); err != nil {
		return 0, d.fail(n, path, "integer %s out of range", n.Value)
	}
	return v, nil
}

// unsigned reads a non-negative integer up to 2^64-1 (seeds use the full range).
func (d *decoder) unsigned(n *yaml.Node, path string) (uint64, error) {
	var v uint64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, d.fail(n, path, "want a non-negative integer, got %s", describe(n))
	}
	if strings.HasPrefix(n.Value, "-") {
		return 0, d.fail(n, path, "must be >= 0, got %s", n.Value)
	}
	if err := n.Decode(&v); err != nil {
		return 0, d.fail(n, path, "integer %s out of range", n.Value)
	}
	return v, nil
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		return false, d.fail(n, path, "want true or false, got %s", describe(n))
	}
	return v, nil
}

// number reads a finite int or float: NaN and infinities would poison every row.
func (d *decoder) number(n *yaml.Node, path string) (float64, error) {
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") {
		return 0, d.fail(n, path, "want a number, got %s", describe(n))
	}
	if err := n.Decode(&v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, d.fail(n, path, "want a finite number, got %s", n.Value)
	}
	return v, nil
}

// numbers reads one number or a list of numbers (at least one).
func (d *decoder) numbers(n *yaml.Node, path string) ([]float64, error) {
	if n.Kind == yaml.ScalarNode {
		v, err := d.number(n, path)
		return []float64{v}, err
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, d.fail(n, path, "want a number or a non-empty list of numbers, got %s", describe(n))
	}
	var out []float64
	err := d.seq(n, path, func(_ int, item *yaml.Node, p string) error {
		v, err := d.number(item, p)
		out = append(out, v)
		return err
	})
	return out, err
}

// scalar reads a constant for fill_null and filters: a number or a string.
func (d *decoder) scalar(n *yaml.Node, path string) (Scalar, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return Scalar{Str: n.Value, IsStr: true}, nil
	}
	if tag := n.ShortTag(); n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") {
		return Scalar{}, d.fail(n, path, "want a number or a string, got %s", describe(n))
	}
	v, err := d.number(n, path)
	sc := Scalar{Num: v}
	if err == nil && n.ShortTag() == "!!int" {
		if n.Decode(&sc.Int) == nil {
			sc.IsInt = true
		} else if n.Decode(&sc.Uint) == nil {
			sc.IsUint = true
		}
	}
	return sc, err
}

// duration reads a Go duration ("5s", "1m30s"); a bare 0 is allowed too, meaning off.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && n.Value == "0" {
		return 0, nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return 0, d.fail(n, path, "want a duration like 5s or 500ms, got %s", describe(n))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, d.fail(n, path, "want a duration like 5s or 500ms, got %q", n.Value)
	}
	if v < 0 {
		return 0, d.fail(n, path, "must be >= 0, got %s", n.Value)
	}
	return v, nil
}

// wait reads how long serve waits for something: a duration, or 0 or none for ever.
func (d *decoder) wait(n *yaml.Node, path string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && (n.Value == "none" || n.Value == "never") {
		return 0, nil
	}
	return d.duration(n, path)
}

// bytes reads a size: an integer number of bytes, or a number with a unit (KB, MB, GB,
// TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024), such as "64GiB".
func (d *decoder) bytes(n *yaml.Node, path string) (int64, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return 0, d.fail(n, path, "want a size such as 500GB or 64GiB, got %s", describe(n))
	}
	v, err := ParseBytes(n.Value)
	if err != nil {
		return 0, d.fail(n, path, "%v", err)
	}
	return v, nil
}

// ParseBytes reads "123", "1.5GB", "64 GiB" ...
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		scale  float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	scale := 1.0
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v*scale >= 1<<62 {
		return 0, fmt.Errorf("want a size such as 500GB or 64GiB (bytes when no unit), got %q", s)
	}
	return int64(v * scale), nil
}
