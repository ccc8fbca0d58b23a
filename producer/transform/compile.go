package transform

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/ring"
)

// maxPad bounds pad's length, which sizes every worker's scratch.
const maxPad = 1 << 20

// Output is one compiled output: immutable, safe to share between goroutines.
type Output struct {
	name    string
	dtype   ring.DType
	cols    []colPlan
	pad     int  // list length; 0 without pad (a fixed_size_list's length without pad)
	fixed   bool // a fixed_size_list without pad: [length] values and no "_len" tensor
	tensors []ring.TensorSpec
}

// colPlan is what happens to one source column.
type colPlan struct {
	src  source
	hash *strHash // string columns: hashed while read
	ops  []op
	kind kind    // after the last op
	fuse fuseF32 // the runs' one-pass form, when it has one
}

// Compile checks o against the resolved source columns (o.Columns already expanded to
// these fields, in stacking order) and fixes the output tensors.
func Compile(o config.Output, fields []arrow.Field) (*Output, error) {
	c := &compiler{o: &o}
	if o.Name == "" {
		return nil, c.errf(-1, nil, "output has no name")
	}
	if len(fields) == 0 {
		return nil, c.errf(-1, nil, "no columns")
	}
	srcs := make([]source, len(fields))
	var strs, others, lists []string
	for i, f := range fields {
		s, err := classify(f)
		if err != nil {
			return nil, c.errf(-1, nil, "%v", err)
		}
		srcs[i] = s
		switch {
		case s.list:
			lists = append(lists, s.name)
		case s.kind == kString:
			strs = append(strs, s.name)
		default:
			others = append(others, s.name)
		}
	}
	switch {
	case len(strs) > 0 && len(others)+len(lists) > 0:
		return nil, c.errf(-1, nil, "mixes string columns (%s) with numeric columns (%s): stack them in separate outputs",
			list(strs), list(append(others, lists...)))
	case len(lists) > 0 && len(fields) > 1:
		return nil, c.errf(-1, nil, "list column %q must be the output's only column (it has %d)", lists[0], len(fields))
	}
	c.ncols, c.list = len(fields), len(lists) > 0
	if c.list {
		c.fixed = srcs[0].fixed
	}
	if err := c.checkSteps(); err != nil {
		return nil, err
	}
	out := &Output{name: o.Name, pad: c.pad}
	if c.pad == 0 && c.fixed > 0 {
		out.pad, out.fixed = c.fixed, true
	}
	for i, s := range srcs {
		p, err := c.column(s, i)
		if err != nil {
			return nil, err
		}
		out.cols = append(out.cols, p)
	}
	if err := c.outputDType(out); err != nil {
		return nil, err
	}
	for i := range out.cols {
		out.cols[i].fuse = fuseFor(out, &out.cols[i])
	}
	t := ring.TensorSpec{Name: o.Name, DType: out.dtype}
	switch {
	case c.list:
		t.Shape = []int{out.pad}
	case len(fields) > 1:
		t.Shape = []int{len(fields)}
	}
	out.tensors = []ring.TensorSpec{t}
	if c.list && !out.fixed {
		out.tensors = append(out.tensors, ring.TensorSpec{Name: o.Name + "_len", DType: ring.Int32})
	}
	return out, nil
}

// outputDType is o.DType, else the last cast's, else by the columns' final kinds.
func (c *compiler) outputDType(out *Output) error {
	if c.o.DType != "" {
		d, err := parseDType(c.o.DType)
		if err != nil {
			return c.errf(-1, nil, "dtype: %v", err)
		}
		out.dtype = d
		return nil
	}
	if c.lastCast != 0 {
		out.dtype = c.lastCast
		return nil
	}
	out.dtype = ring.Int64
	for _, p := range out.cols {
		if p.kind == kFloat {
			out.dtype = ring.Float32
		}
	}
	return nil
}

// Name is the output's name, that of its first tensor.
func (o *Output) Name() string { return o.name }

// Columns are the source column names, in stacking order.
func (o *Output) Columns() []string {
	names := make([]string, len(o.cols))
	for i, p := range o.cols {
		names[i] = p.src.name
	}
	return names
}

// NumColumns is len(Columns()).
func (o *Output) NumColumns() int { return len(o.cols) }

// Tensors are the output's tensors: the values, then for pad "<name>_len".
func (o *Output) Tensors() []ring.TensorSpec {
	ts := make([]ring.TensorSpec, len(o.tensors))
	for i, t := range o.tensors {
		ts[i] = ring.TensorSpec{Name: t.Name, DType: t.DType, Shape: append([]int(nil), t.Shape...)}
	}
	return ts
}

// rowBytes is the size of one row of tensor i.
func (o *Output) rowBytes(i int) int {
	n := o.tensors[i].DType.Size()
	for _, d := range o.tensors[i].Shape {
		n *= d
	}
	return n
}

// errf formats a Compile error: "line L: output "x"[, column "c" (type)][, transform
// N (op)]: ...", t being the 0-based transform index or -1.
func (c *compiler) errf(t int, s *source, format string, args ...any) error {
	var b strings.Builder
	line := c.o.Line
	if t >= 0 && c.o.Transforms[t].Line > 0 {
		line = c.o.Transforms[t].Line
	}
	if line > 0 {
		fmt.Fprintf(&b, "line %d: ", line)
	}
	fmt.Fprintf(&b, "output %q", c.o.Name)
	if s != nil {
		fmt.Fprintf(&b, ", column %q (%s)", s.name, s.typ)
	}
	if t >= 0 {
		fmt.Fprintf(&b, ", transform %d (%s)", t+1, c.o.Transforms[t].Op)
	}
	return fmt.Errorf("%s: %s", b.String(), fmt.Sprintf(format, args...))
}

// list shortens a list of names for an error message.
func list(names []string) string {
	if len(names) > 3 {
		return fmt.Sprintf("%s, ... %d in all", strings.Join(names[:3], ", "), len(names))
	}
	return strings.Join(names, ", ")
}
