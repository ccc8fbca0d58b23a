package config

import (
	"fmt"
	"strings"
)

// hashVersion starts the hash input; bump it when the meaning of a field changes, so that
// caches and resume states keyed by the old meaning are not mistaken for current ones.
const hashVersion = "shmloader-config-hash v2"

// HashInput is a canonical text of everything in the config that changes the bytes
// global batches hold: batch_size, seed, shuffle, drop_last, partitions, filter and
// outputs with their transforms. It leaves out what never changes a byte (job, workers,
// prefetch, progress, ring_depth), the layout (ranks, node rank and count: they change
// only which trainer receives a global batch, so a state saved under one resumes under
// another), epochs (epoch e is the same whatever the count, so a
// run may be extended and still resume), source lines, and the dataset pattern: the
// caller adds a fingerprint of the dataset's files instead. Column patterns are hashed
// as written; with the dataset's schema in its fingerprint, they fix the columns.
func (c *Config) HashInput() []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("%s", hashVersion)
	w("batch_size %d", c.BatchSize)
	w("seed %d", c.Seed)
	w("shuffle row_groups=%t window=%d", c.Shuffle.RowGroups, c.Shuffle.Window)
	w("drop_last %t", c.DropLast)
	w("partitions %d", c.Partitions)
	c.rowText(&b)
	return []byte(b.String())
}

// entryVersion starts RowHashInput; bump it when the meaning of a field changes.
const entryVersion = "shmloader-row-hash v1"

// RowHashInput is a canonical text of what turns one row group into the bytes of its
// rows: the filter and the outputs with their transforms. It keys the cache's entries
// (with the file, the row group and the entry format): batch size, seed, shuffle and
// the layout only reorder rows, so jobs that differ in them share entries.
func (c *Config) RowHashInput() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", entryVersion)
	c.rowText(&b)
	return []byte(b.String())
}

func (c *Config) rowText(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	for _, p := range c.Filter {
		w("filter %s", predicateText(&p))
	}
	for _, o := range c.Outputs {
		w("output name=%q dtype=%q columns=%q", o.Name, o.DType, o.Columns)
		for _, t := range o.Transforms {
			w("  %s", transformText(&t))
		}
	}
}

// transformText writes only the arguments of t's op, so a stray value in an unused
// field of a Transform built in code cannot change the hash.
func transformText(t *Transform) string {
	switch t.Op {
	case OpCast:
		return fmt.Sprintf("cast dtype=%q", t.DType)
	case OpFillNull:
		return "fill_null value=" + scalarText(t.Fill)
	case OpNormalize:
		return fmt.Sprintf("normalize mean=%v std=%v", t.Mean, t.Std)
	case OpClip:
		return "clip min=" + optText(t.Min) + " max=" + optText(t.Max) + " exact=" + scalarText(t.MinExact) + "," + scalarText(t.MaxExact)
	case OpBucketize:
		return fmt.Sprintf("bucketize boundaries=%v", t.Boundaries)
	case OpHashBucket:
		return fmt.Sprintf("hash_bucket buckets=%d seed=%d", t.Buckets, t.HashSeed)
	case OpPad:
		return fmt.Sprintf("pad length=%d value=%s", t.Length, scalarText(t.PadExact))
	case OpLog1p:
		return "log1p"
	case OpDatetime:
		// Calendar parts in a zone follow the built-in tz database's rules: another
		// release may give other bytes, so it keys the config and the cache's entries.
		return fmt.Sprintf("datetime part=%q tz=%q tzdata=%s", t.Part, t.TZ, TZDataRelease)
	case OpDecimal:
		if t.Unscaled {
			return "decimal unscaled"
		}
		return fmt.Sprintf("decimal scale=%d", t.Scale)
	}
	return fmt.Sprintf("%q", t.Op)
}

func predicateText(p *Predicate) string {
	s := fmt.Sprintf("column=%q op=%q", p.Column, p.Op)
	switch p.Op {
	case PredIn, PredNotIn:
		return s + " values=" + scalarsText(p.Values)
	case PredNull, PredNotNull:
		return s
	}
	return s + " value=" + scalarText(p.Value)
}

// scalarText tells the string "1" from the number 1.
func scalarText(s Scalar) string {
	switch {
	case s.IsStr:
		return fmt.Sprintf("%q", s.Str)
	case s.IsInt:
		return fmt.Sprintf("%d", s.Int)
	case s.IsUint:
		return fmt.Sprintf("%d", s.Uint)
	}
	return fmt.Sprintf("%v", s.Num)
}

func scalarsText(ss []Scalar) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = scalarText(s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func optText(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%v", *v)
}
