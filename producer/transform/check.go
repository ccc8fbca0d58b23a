package transform

import (
	"math"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

// compiler holds what Compile learns about one output before and while it plans each
// column.
type compiler struct {
	o        *config.Output
	ncols    int
	list     bool
	fixed    int          // the list column is a fixed_size_list of this length
	pad      int          // pad length
	lastCast ring.DType   // 0: no cast
	dtypes   []ring.DType // per transform, a cast's dtype
}

// checkSteps checks what the transforms say on their own, whatever the columns: each
// error is reported once, not once per column.
func (c *compiler) checkSteps() error {
	c.dtypes = make([]ring.DType, len(c.o.Transforms))
	for i, t := range c.o.Transforms {
		var err error
		switch t.Op {
		case config.OpCast:
			c.dtypes[i], err = parseDType(t.DType)
			if err != nil {
				return c.errf(i, nil, "%v", err)
			}
			c.lastCast = c.dtypes[i]
		case config.OpFillNull, config.OpLog1p, config.OpDatetime, config.OpDecimal:
		case config.OpNormalize:
			err = c.checkNormalize(i, t)
		case config.OpClip:
			switch {
			case t.Min == nil && t.Max == nil:
				return c.errf(i, nil, "clip needs min, max or both")
			case t.Min != nil && math.IsNaN(*t.Min) || t.Max != nil && math.IsNaN(*t.Max):
				return c.errf(i, nil, "clip bounds cannot be NaN")
			case t.Min != nil && t.Max != nil && *t.Min > *t.Max:
				return c.errf(i, nil, "min %g is above max %g", *t.Min, *t.Max)
			}
		case config.OpBucketize:
			err = c.checkBoundaries(i, t.Boundaries)
		case config.OpHashBucket:
			if t.Buckets < 1 {
				return c.errf(i, nil, "buckets must be at least 1")
			}
		case config.OpPad:
			switch {
			case c.pad != 0:
				return c.errf(i, nil, "a second pad: an output pads once")
			case !c.list:
				return c.errf(i, nil, "pad needs a list column; the output has none")
			case t.Length < 1 || t.Length > maxPad:
				return c.errf(i, nil, "length %d outside 1..%d", t.Length, maxPad)
			}
			c.pad = t.Length
		default:
			return c.errf(i, nil, "unknown transform %q", t.Op)
		}
		if err != nil {
			return err
		}
	}
	if c.list && c.pad == 0 && c.fixed == 0 {
		return c.errf(-1, nil, "a list column needs a pad transform ({pad: {length: N}}) to give every row one length")
	}
	return nil
}

func (c *compiler) checkNormalize(i int, t config.Transform) error {
	for _, p := range []struct {
		name string
		v    []float64
	}{{"mean", t.Mean}, {"std", t.Std}} {
		if len(p.v) != 1 && len(p.v) != c.ncols {
			return c.errf(i, nil, "%s has %d values for %d columns (want 1 or %d)", p.name, len(p.v), c.ncols, c.ncols)
		}
		for j, v := range p.v {
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				return c.errf(i, nil, "%s value %d is %g: want a finite number", p.name, j+1, v)
			case p.name == "std" && v == 0:
				return c.errf(i, nil, "std value %d is 0", j+1)
			}
		}
	}
	return nil
}

func (c *compiler) checkBoundaries(i int, b []float64) error {
	if len(b) == 0 {
		return c.errf(i, nil, "no boundaries")
	}
	for j, v := range b {
		switch {
		case math.IsNaN(v):
			return c.errf(i, nil, "boundary %d is NaN", j+1)
		case j > 0 && v <= b[j-1]:
			return c.errf(i, nil, "boundaries must increase strictly: %g follows %g", v, b[j-1])
		}
	}
	return nil
}
