package transform

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

// column plans source column s, position col of the output: it follows the value kind
// through the transforms and turns each into ops for that kind.
func (c *compiler) column(s source, col int) (colPlan, error) {
	p := colPlan{src: s}
	k := s.kind
	emit := func(o op) { p.ops = append(p.ops, o) }
	toFloat := func() {
		switch k {
		case kInt:
			emit(op{code: opToFloat})
		case kUint:
			emit(op{code: opUToFloat})
		}
		k = kFloat
	}
	var fillStr *string
	rawTime := s.tm.class != tcNone // no datetime step yet
	for i, t := range c.o.Transforms {
		fail := func(format string, args ...any) error { return c.errf(i, &s, format, args...) }
		if k == kString && t.Op != config.OpFillNull && t.Op != config.OpHashBucket {
			return p, fail("a string column takes only fill_null and hash_bucket until it is hashed")
		}
		if rawTime && t.Op != config.OpDatetime {
			return p, fail("a %s column takes datetime as its first step (such as `datetime: unix_seconds` or `datetime: hour`), then the others; with no steps it is written as its int64 %s",
				s.tm.class, unitName(s.tm.unit))
		}
		switch t.Op {
		case config.OpDatetime:
			if !rawTime {
				return p, fail("datetime takes timestamp, date and time columns as its first step")
			}
			o, err := c.datetime(i, t, &s)
			if err != nil {
				return p, err
			}
			emit(o)
			k, rawTime = kInt, false
			if o.tm.part == pUnixSeconds {
				k = kFloat
			}
		case config.OpDecimal:
			if !s.dec.ok || i > 0 {
				return p, fail("decimal takes decimal columns as their first step")
			}
			shift := int32(t.Scale) - s.dec.scale
			if t.Unscaled {
				shift = 0
			}
			if shift < 0 {
				return p, fail("scale %d is below the column's %d: digits would be lost (read the float value instead: no decimal step)", t.Scale, s.dec.scale)
			}
			p.src.dec.asInt, p.src.dec.shift = true, shift
			k = kInt
		case config.OpCast:
			d := c.dtypes[i]
			switch {
			case k == kFloat && isFloatDType(d):
				if d != ring.Float64 {
					emit(op{code: opCastFF, dt: d})
				}
			case k == kFloat:
				emit(op{code: opCastFI, dt: d})
			case isFloatDType(d):
				emit(op{code: opCastIF, dt: d, unsigned: k == kUint})
			case d != ring.Int64 && d != ring.Uint64:
				emit(op{code: opCastII, dt: d})
			}
			k = kindOf(d)
		case config.OpFillNull:
			switch {
			case t.Fill.IsStr && k == kString:
				if fillStr == nil {
					fillStr = &t.Fill.Str
				}
			case t.Fill.IsStr:
				return p, fail("fill %q is a string but the values are %s numbers", t.Fill.Str, k)
			case k == kString:
				return p, fail("fill %g is a number but the column holds strings", t.Fill.Num)
			case k == kFloat:
				emit(op{code: opFillF, f: t.Fill.Num})
			default:
				v, err := exactConst(t.Fill, k)
				if err != nil {
					return p, fail("fill %v", err)
				}
				emit(op{code: opFillI, i: v})
			}
		case config.OpNormalize:
			toFloat()
			emit(op{code: opNorm, f: pick(t.Mean, col), g: pick(t.Std, col)})
		case config.OpClip:
			o, err := clipOp(t, k)
			if err != nil {
				return p, fail("%v", err)
			}
			emit(o)
		case config.OpLog1p:
			toFloat()
			emit(op{code: opLog1p})
		case config.OpBucketize:
			toFloat()
			emit(op{code: opBucket, bounds: append([]float64(nil), t.Boundaries...)})
			k = kInt
		case config.OpHashBucket:
			switch k {
			case kFloat:
				return p, fail("hash_bucket takes integers or strings: cast the floats to an integer type first")
			case kString:
				p.hash = &strHash{seed: fnvSeed(t.HashSeed), buckets: t.Buckets}
				if fillStr != nil {
					p.hash.filled, p.hash.fill = true, p.hash.bucket(*fillStr)
				}
			default:
				emit(op{code: opHash, seed: fnvSeed(t.HashSeed), buckets: t.Buckets})
			}
			k = kInt
			if t.Buckets > 1<<63 {
				k = kUint
			}
		case config.OpPad:
			if k == kFloat {
				emit(op{code: opPadF, f: t.PadValue})
				break
			}
			v, err := exactConst(orFloat(t.PadExact, t.PadValue), k)
			if err != nil {
				return p, fail("pad_value %v", err)
			}
			emit(op{code: opPadI, i: v})
		}
	}
	if k == kString {
		return p, c.errf(-1, &s, "a string column needs hash_bucket: strings cannot be written as they are")
	}
	p.kind = k
	return p, nil
}

// datetime compiles a datetime step for time column s.
func (c *compiler) datetime(i int, t config.Transform, s *source) (op, error) {
	fail := func(format string, args ...any) error { return c.errf(i, s, format, args...) }
	tm := &timeOp{part: part(slices.Index(config.DatetimeParts, t.Part)), unit: s.tm.unit}
	switch {
	case tm.part > pDayOfYear:
		return op{}, fail("unknown part %q", t.Part)
	case s.tm.class == tcTimeOfDay && tm.part.dated():
		return op{}, fail("a time of day has no %s: it takes unix_* (since midnight), hour, minute and second", t.Part)
	case s.tm.class != tcTimestamp && t.TZ != "":
		return op{}, fail("a %s has no time zone: tz is for timestamps", s.tm.class)
	}
	zone := s.tm.zone
	if t.TZ != "" {
		zone = t.TZ
	}
	if tm.part.zoned() {
		loc, err := config.LoadZone(zone)
		if err != nil {
			return op{}, fail("%v; name the zone with tz", err)
		}
		if loc != time.UTC {
			tm.loc = loc
		}
	}
	return op{code: opDatetime, tm: tm}, nil
}

// kindOf is the working kind of values cast to d.
func kindOf(d ring.DType) kind {
	switch {
	case isFloatDType(d):
		return kFloat
	case d == ring.Uint64:
		return kUint
	}
	return kInt
}

func pick(v []float64, col int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[col]
}

// intConst converts a config number to a working integer of kind k: it must be an
// integer in k's range.
// clipOp compiles clip for values of kind k. Integer bounds must be integers (or
// infinite); beyond the kind's range they saturate, which clips nothing on that side.
func clipOp(t config.Transform, k kind) (op, error) {
	if k == kFloat {
		o := op{code: opClipF, f: math.Inf(-1), g: math.Inf(1)}
		if t.Min != nil {
			o.f = *t.Min
		}
		if t.Max != nil {
			o.g = *t.Max
		}
		return o, nil
	}
	for _, b := range []*float64{t.Min, t.Max} {
		if b != nil && *b != math.Trunc(*b) && !math.IsInf(*b, 0) {
			return op{}, fmt.Errorf("bound %g is not an integer but the values are %s (cast to a float first)", *b, k)
		}
	}
	code, lo, hi := opClipI, int64(math.MinInt64), int64(math.MaxInt64)
	if k == kUint {
		code, lo, hi = opClipU, 0, -1 // as uint64: 0 and 2^64-1
	}
	if t.Min != nil {
		lo = clipBound(orFloat(t.MinExact, *t.Min), k)
	}
	if t.Max != nil {
		hi = clipBound(orFloat(t.MaxExact, *t.Max), k)
	}
	return op{code: code, i: lo, j: hi}, nil
}
