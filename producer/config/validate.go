package config

import (
	"fmt"
	"strconv"

	"github.com/shmloader/shmloader/ring"
	"github.com/shmloader/shmloader/shm"
)

// intKey is an integer key and its allowed range. Parse checks each as it reads it (at
// the value's line); Validate checks them again, since flags may have changed them.
type intKey struct {
	path     string
	p        *int
	min, max int
}

// The upper bounds keep absurd values from becoming huge allocations; they are far
// beyond any real host (batch_size's is the ring's batch capacity limit).
func (c *Config) intKeys() []intKey {
	return []intKey{
		{"batch_size", &c.BatchSize, 1, 1 << 30},
		{"shuffle.window", &c.Shuffle.Window, 0, 1 << 20},
		{"partitions", &c.Partitions, 0, 1 << 20},
		{"ranks", &c.Ranks, 1, 1 << 12},
		{"node.rank", &c.Node.Rank, 0, 1<<20 - 1},
		{"node.count", &c.Node.Count, 1, 1 << 20},
		{"ring_depth", &c.RingDepth, ring.MinSlots, ring.MaxSlots},
		{"workers", &c.Workers, 0, 1 << 16},
		{"prefetch", &c.Prefetch, 0, 1 << 10},
		{"cache.shards", &c.Cache.Shards, 1, 100},
	}
}

// problem says what is wrong with v for k, or "".
func (k intKey) problem(v int64) string {
	if v < int64(k.min) || v > int64(k.max) {
		return fmt.Sprintf("must be in %d..%d, got %d", k.min, k.max, v)
	}
	return ""
}

// Validate checks the whole config: every value on its own, as Parse does, and then the
// rules across keys and the required keys. Run it after the last command-line override.
// Errors name the key, and the file and line when the value came from the file.
func (c *Config) Validate() error {
	for _, k := range c.intKeys() {
		if msg := k.problem(int64(*k.p)); msg != "" {
			return c.errAt(k.path, "%s", msg)
		}
	}
	if err := shm.ValidateJob(c.Job); err != nil {
		return c.errAt("job", "%w", err)
	}
	if c.Progress < 0 {
		return c.errAt("progress", "must be >= 0, got %s", c.Progress)
	}
	if c.Node.Rank >= c.Node.Count {
		return c.errAt("node.rank", "must be < node.count (%d), got %d", c.Node.Count, c.Node.Rank)
	}
	if c.Dataset == "" {
		return c.errAt("dataset", "required: a Parquet file, directory or glob")
	}
	for i := range c.Filter {
		p := &c.Filter[i]
		if msg := p.problem(); msg != "" {
			return c.errAt("filter["+strconv.Itoa(i)+"]", "%s", msg)
		}
	}
	return c.checkOutputs()
}

// checkOutputs runs the checks of every output and of the outputs together; Parse runs
// it on what it read, Validate on what the caller holds.
func (c *Config) checkOutputs() error {
	if len(c.Outputs) == 0 {
		return c.errAt("outputs", "at least one output is required")
	}
	names := map[string]bool{}
	tensors := 0
	for i := range c.Outputs {
		o := &c.Outputs[i]
		path := "outputs." + o.Name
		if names[o.Name] {
			return c.errAt(path, "output %q given twice", o.Name)
		}
		names[o.Name] = true
		if msg := o.problem(); msg != "" {
			return c.errAt(path, "%s", msg)
		}
		for j := range o.Transforms {
			t := &o.Transforms[j]
			key, msg := t.problem()
			if msg == "" && j > 0 && firstOnly(t.Op) {
				msg = t.Op + " must be the first step: it reads the column's stored values"
			}
			if msg != "" {
				p := transformPath(path, j, t.Op)
				line := c.Lines[p]
				if l, ok := c.Lines[join(p, key)]; ok && key != "" {
					line = l // the argument's own line
				}
				return c.errAtLine(p, line, "%s", msg)
			}
		}
		tensors++
		if o.padded() {
			tensors++
		}
	}
	// pad adds a "<name>_len" tensor, which must not take another output's name.
	for _, o := range c.Outputs {
		if l := o.Name + LenSuffix; o.padded() && names[l] {
			return c.errAt("outputs."+l, "name taken by the length tensor of output %q (pad adds it)", o.Name)
		}
	}
	if tensors > ring.MaxTensors {
		return c.errAt("outputs", "%d tensors (pad adds one each), the ring holds at most %d", tensors, ring.MaxTensors)
	}
	return nil
}

func transformPath(output string, i int, op string) string {
	return output + ".transforms[" + strconv.Itoa(i) + "]." + op
}

// errAt is an *Error at key path, with the file and line when Lines knows the key.
func (c *Config) errAt(path, format string, args ...any) error {
	return c.errAtLine(path, c.Lines[path], format, args...)
}

func (c *Config) errAtLine(path string, line int, format string, args ...any) error {
	e := &Error{Path: path, Line: line, Err: fmt.Errorf(format, args...)}
	if e.Line > 0 {
		e.File = c.Source
	}
	return e
}
