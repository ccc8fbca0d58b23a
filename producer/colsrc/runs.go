package colsrc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/shmloader/shmloader/producer/pages"
	"github.com/shmloader/shmloader/producer/transform"
)

// pageRuns gives the transforms one column chunk's values from its page decoder, a
// run as the decoder yields it, viewed, not copied. INT96 pages are converted to
// nanoseconds; INT96 values and byte-array decimals that arrow-go refuses are errors
// (check).
type pageRuns struct {
	dec   pages.Decoder
	v     pages.Values
	phys  parquet.Type
	int96 bool // INT96 pages: the values are converted to ns
	most  int  // bytes a stored decimal may have (16, 32); 0 when the values are no such decimals
	row   int  // rows read so far
	i64   []int64

	// The dictionary as the transforms see it, made from the decoder's (generation gen).
	dict     transform.Values
	dictGen  uint64
	dictMade bool
	dictI64  []int64
	bad      []bool // entries arrow-go refuses; nil when there are none
}

// reset starts chunk c, whose values the transforms take as kind k.
func (p *pageRuns) reset(c pages.Chunk, k transform.ValueKind) error {
	if err := p.dec.Reset(c); err != nil {
		return err
	}
	p.dec.Indices, p.dec.Raw = true, k.RawBytes()
	p.phys, p.int96 = c.Type, c.Type == parquet.Types.Int96
	p.most = 0
	if c.Type == parquet.Types.ByteArray || c.Type == parquet.Types.FixedLenByteArray {
		switch k {
		case transform.Decimal128Values:
			p.most = 16
		case transform.Decimal256Values:
			p.most = 32
		}
	}
	p.row, p.dictMade = 0, false
	return nil
}

func (p *pageRuns) Next(n int, out *transform.Values) error {
	m, err := p.dec.Read(n, &p.v)
	if err != nil {
		return err
	}
	v := &p.v
	// Only the slice of the chunk's physical type: the transforms read no other.
	out.N, out.HasNull, out.Null, out.Dict, out.Raw, out.Idx = m, v.HasNull, v.Null, v.Dict, v.Raw, v.Idx
	switch p.phys {
	case parquet.Types.Boolean:
		out.Bool = v.Bool
	case parquet.Types.Int32:
		out.I32 = v.I32
	case parquet.Types.Int64:
		out.I64 = v.I64
	case parquet.Types.Float:
		out.F32 = v.F32
	case parquet.Types.Double:
		out.F64 = v.F64
	case parquet.Types.ByteArray, parquet.Types.FixedLenByteArray:
		out.Bin = v.Bin
	}
	if p.int96 || p.most > 0 {
		if err := p.check(); err != nil {
			return err
		}
		if p.int96 && !v.Dict {
			p.i64 = growTo(p.i64, m)
			for k, x := range v.I96[:m] {
				p.i64[k], _ = int96Nanos(x)
			}
			out.I64 = p.i64
		}
	}
	p.row += m
	return nil
}

// check fails on a value of the held run that arrow-go refuses to read, whether a block
// asks for its row or not: arrow-go converts every value of a chunk. A dictionary entry
// fails only when a row uses it, as with arrow-go, which converts the rows.
func (p *pageRuns) check() error {
	v := &p.v
	if v.Dict {
		if p.loadDict(); p.bad == nil {
			return nil
		}
		for k, x := range v.Idx[:v.N] {
			if (!v.HasNull || v.Null[k] == 0) && p.bad[x] {
				d, _ := p.dec.Dictionary()
				return fmt.Errorf("row %d: %w", p.row+k, valueErr(d, int(x), p.int96, p.most))
			}
		}
		return nil
	}
	for k := range v.N {
		if !v.HasNull || v.Null[k] == 0 {
			if err := valueErr(v, k, p.int96, p.most); err != nil {
				return fmt.Errorf("row %d: %w", p.row+k, err)
			}
		}
	}
	return nil
}

func (p *pageRuns) Dictionary() (*transform.Values, uint64) {
	p.loadDict()
	return &p.dict, p.dictGen
}

// loadDict remakes the dictionary the transforms see when the decoder loaded another.
func (p *pageRuns) loadDict() {
	d, gen := p.dec.Dictionary()
	if p.dictMade && gen == p.dictGen {
		return
	}
	p.dictMade, p.dictGen = true, gen
	p.dict = transform.Values{N: d.N, Bool: d.Bool, I32: d.I32, I64: d.I64, F32: d.F32, F64: d.F64, Bin: d.Bin}
	p.bad = nil
	if !p.int96 && p.most == 0 {
		return
	}
	bad := false
	for k := range d.N {
		bad = bad || valueErr(d, k, p.int96, p.most) != nil
	}
	if bad {
		p.bad = make([]bool, d.N)
		for k := range d.N {
			p.bad[k] = valueErr(d, k, p.int96, p.most) != nil
		}
	}
	if p.int96 {
		p.dictI64 = growTo(p.dictI64, d.N)
		for k, x := range d.I96[:d.N] {
			p.dictI64[k], _ = int96Nanos(x)
		}
		p.dict.I64 = p.dictI64
	}
}

// valueErr says why arrow-go would refuse value k of v, nil when it reads it: an INT96
// timestamp (int96) or a stored decimal of more than most bytes (most > 0).
func valueErr(v *pages.Values, k int, int96 bool, most int) error {
	switch {
	case int96:
		if _, ok := int96Nanos(v.I96[k]); !ok {
			return fmt.Errorf("INT96 timestamp %x is outside the int64 nanoseconds from 1970 (or its nanoseconds of the day pass a day)", v.I96[k][:])
		}
	case most > 0:
		if n := len(v.Bin[k]); n < 1 || n > most {
			return fmt.Errorf("decimal of %d bytes: want 1 to %d", n, most)
		}
	}
	return nil
}

const nsPerDay = 86400 * int64(1e9)

// int96Nanos is an INT96 timestamp (8 bytes of nanoseconds in the day, then a 4-byte
// Julian day, both little-endian) as nanoseconds since 1970, as arrow-go's
// Int96.ToTimestamp computes it; ok is false where that fails.
func int96Nanos(x pages.Int96) (int64, bool) {
	const julianUnixEpoch = 2440588
	nanos := binary.LittleEndian.Uint64(x[:8])
	if nanos >= uint64(nsPerDay) {
		return 0, false
	}
	days := int64(binary.LittleEndian.Uint32(x[8:])) - julianUnixEpoch
	maxDays := int64(math.MaxInt64) / nsPerDay
	if days > maxDays || days == maxDays && int64(nanos) > math.MaxInt64%nsPerDay {
		return 0, false
	}
	minDays := int64(math.MinInt64) / nsPerDay
	minNanos := nsPerDay + math.MinInt64%nsPerDay
	if days < minDays {
		if days != minDays-1 || int64(nanos) < minNanos {
			return 0, false
		}
		return math.MinInt64 + int64(nanos) - minNanos, true
	}
	return days*nsPerDay + int64(nanos), true
}

func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// A partition column (hive-style key=value folders) has one value per file and no
// column chunk: a Const, which constRuns gives every row as a dictionary of one entry,
// so that the transforms run on it once.

// Const is a partition column's value in one file, as the transforms read it.
type Const struct {
	kind transform.ValueKind
	val  transform.Values // one entry; none for a null
	null bool
}

// ConstOf is the value of a, an array of one value (Dataset.Constant's), for the
// transforms; ok is false for a type that has no such form here.
func ConstOf(a arrow.Array) (c Const, ok bool) {
	if a.Len() != 1 {
		return c, false
	}
	c.null = a.IsNull(0)
	if !c.null {
		c.val.N = 1
	}
	switch a := a.(type) {
	case *array.Int32:
		c.kind, c.val.I32 = transform.Int32Values, []int32{a.Value(0)}
	case *array.Int64:
		c.kind, c.val.I64 = transform.Int64Values, []int64{a.Value(0)}
	case *array.String:
		c.kind, c.val.Bin = transform.BytesValues, [][]byte{[]byte(a.Value(0))}
	case *array.LargeString:
		c.kind, c.val.Bin = transform.BytesValues, [][]byte{[]byte(a.Value(0))}
	case *array.Binary:
		c.kind, c.val.Bin = transform.BytesValues, [][]byte{a.Value(0)}
	case *array.LargeBinary:
		c.kind, c.val.Bin = transform.BytesValues, [][]byte{a.Value(0)}
	default:
		return c, false
	}
	return c, true
}

// Kind is the kind of the constant's values.
func (c *Const) Kind() transform.ValueKind { return c.kind }

// constRuns gives one Const to every row.
type constRuns struct {
	c    *Const
	gen  uint64   // changes with every constant set: the transforms redo it then
	idx  []uint32 // zeros: every row is entry 0
	ones []byte   // null flags of a null constant
}

func (r *constRuns) set(c *Const) {
	r.c = c
	r.gen++
}

func (r *constRuns) Next(n int, v *transform.Values) error {
	if len(r.idx) < n {
		r.idx, r.ones = make([]uint32, n), make([]byte, n)
		for i := range r.ones {
			r.ones[i] = 1
		}
	}
	*v = transform.Values{N: n, Dict: true, Idx: r.idx[:n]}
	if r.c.null {
		v.HasNull, v.Null = true, r.ones[:n]
	}
	return nil
}

func (r *constRuns) Dictionary() (*transform.Values, uint64) { return &r.c.val, r.gen }
