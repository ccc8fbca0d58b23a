package config

import (
	"fmt"
	"math"
	"slices"
)

// MaxPadLength bounds pad's length: a row's list becomes that many elements of the slot.
const MaxPadLength = 1 << 20

// problem says what is wrong with the step's arguments: the argument at fault ("" for the
// step as a whole), whose line the error gets when it was written out, and why; msg is ""
// when all is well. Parse reports it in the file; Validate checks configs built in code.
func (t *Transform) problem() (key, msg string) {
	switch t.Op {
	case OpCast:
		if _, err := ParseDType(t.DType); err != nil {
			return "dtype", err.Error()
		}
	case OpFillNull:
		if !t.Fill.IsStr && !finite(t.Fill.Num) {
			return "value", fmt.Sprintf("fill value must be finite, got %v", t.Fill.Num)
		}
	case OpNormalize:
		return normalizeProblem(t.Mean, t.Std)
	case OpClip:
		switch {
		case t.Min == nil && t.Max == nil:
			return "", "give min, max or both"
		case t.Min != nil && !finite(*t.Min):
			return "min", "min must be finite"
		case t.Max != nil && !finite(*t.Max):
			return "max", "max must be finite"
		case t.Min != nil && t.Max != nil && *t.Min > *t.Max:
			return "min", fmt.Sprintf("min %v is greater than max %v", *t.Min, *t.Max)
		}
	case OpLog1p:
	case OpBucketize:
		return "boundaries", boundariesProblem(t.Boundaries)
	case OpHashBucket:
		if t.Buckets < 1 {
			return "buckets", "buckets must be >= 1"
		}
	case OpPad:
		if t.Length < 1 || t.Length > MaxPadLength {
			return "length", fmt.Sprintf("length must be in 1..%d, got %d", MaxPadLength, t.Length)
		}
		if !finite(t.PadValue) {
			return "value", fmt.Sprintf("value must be finite, got %v", t.PadValue)
		}
	case OpDatetime:
		if !slices.Contains(DatetimeParts, t.Part) {
			return "part", fmt.Sprintf("part %q: want one of %v", t.Part, DatetimeParts)
		}
		if _, err := LoadZone(t.TZ); err != nil {
			return "tz", err.Error()
		}
	case OpDecimal:
		if !t.Unscaled && (t.Scale < 0 || t.Scale > MaxDecimalScale) {
			return "scale", fmt.Sprintf("scale must be in 0..%d, got %d", MaxDecimalScale, t.Scale)
		}
	default:
		return "", fmt.Sprintf("unknown transform %q (want one of %v)", t.Op, Ops)
	}
	return "", ""
}

// normalizeProblem checks (x - mean) / std: std must be positive, and two lists of one
// value per column must agree on the number of columns.
func normalizeProblem(mean, std []float64) (key, msg string) {
	if len(mean) == 0 {
		return "mean", "mean needs at least one value"
	}
	if len(std) == 0 {
		return "std", "std needs at least one value"
	}
	for i, m := range mean {
		if !finite(m) {
			return "mean", fmt.Sprintf("mean[%d] must be finite, got %v", i, m)
		}
	}
	for i, s := range std {
		if !(s > 0) || !finite(s) {
			if len(std) == 1 {
				return "std", fmt.Sprintf("std must be > 0, got %v", s)
			}
			return "std", fmt.Sprintf("std[%d] must be > 0, got %v", i, s)
		}
	}
	if len(mean) > 1 && len(std) > 1 && len(mean) != len(std) {
		return "std", fmt.Sprintf("%d means but %d stds: give one value, or one per column for both", len(mean), len(std))
	}
	return "", ""
}

func boundariesProblem(b []float64) string {
	if len(b) == 0 {
		return "boundaries: want at least one"
	}
	for i, v := range b {
		if !finite(v) {
			return fmt.Sprintf("boundaries[%d]: must be finite, got %v", i, v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Sprintf("boundaries must be strictly increasing: [%d] = %v after %v", i, v, b[i-1])
		}
	}
	return ""
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
