package gen

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batcher builds the record batch of a range of row ids.
type batcher struct {
	cfg    Config
	schema *arrow.Schema
	cols   []column
	signal []*column // f001, f002, f003 where present: the label's inputs
	noise  *column   // the label column: its own randomness
	mem    memory.Allocator
	valid  []bool
	f32    []float32
	i64    []int64
	buf    []byte
}

func newBatcher(cfg Config, schema *arrow.Schema) *batcher {
	b := &batcher{cfg: cfg, schema: schema, cols: columns(cfg), mem: memory.DefaultAllocator}
	for i := range b.cols {
		c := &b.cols[i]
		switch {
		case c.name == "f001" || c.name == "f002" || c.name == "f003":
			b.signal = append(b.signal, c)
		case c.kind == kindLabel:
			b.noise = c
		}
	}
	return b
}

// batch returns the rows lo..hi-1; the caller releases it.
func (b *batcher) batch(lo, hi int64) arrow.RecordBatch {
	n := int(hi - lo)
	if cap(b.valid) < n {
		b.valid, b.f32, b.i64 = make([]bool, n), make([]float32, n), make([]int64, n)
	}
	valid, f32, i64 := b.valid[:n], b.f32[:n], b.i64[:n]
	arrs := make([]arrow.Array, len(b.cols))
	for ci := range b.cols {
		c := &b.cols[ci]
		for i := range valid {
			valid[i] = !c.isNull(lo+int64(i), b.cfg.NullFraction)
		}
		switch c.kind {
		case kindID:
			for i := range i64 {
				i64[i] = lo + int64(i)
			}
			arrs[ci] = b.int64s(i64, nil)
		case kindFeature:
			for i := range f32 {
				f32[i] = c.feature(lo + int64(i))
			}
			arrs[ci] = b.float32s(f32, valid)
		case kindCategorical:
			for i := range i64 {
				i64[i] = c.categorical(lo + int64(i))
			}
			arrs[ci] = b.int64s(i64, valid)
		case kindString:
			arrs[ci] = b.strings(c, lo, valid)
		case kindSeq:
			arrs[ci] = b.lists(c, lo, valid)
		case kindLabel:
			for i := range f32 {
				f32[i] = label(lo+int64(i), b.signal, b.noise)
			}
			arrs[ci] = b.float32s(f32, nil)
		}
	}
	rec := array.NewRecordBatch(b.schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func (b *batcher) int64s(v []int64, valid []bool) arrow.Array {
	bld := array.NewInt64Builder(b.mem)
	defer bld.Release()
	bld.AppendValues(v, valid)
	return bld.NewArray()
}

func (b *batcher) float32s(v []float32, valid []bool) arrow.Array {
	bld := array.NewFloat32Builder(b.mem)
	defer bld.Release()
	bld.AppendValues(v, valid)
	return bld.NewArray()
}

func (b *batcher) strings(c *column, lo int64, valid []bool) arrow.Array {
	bld := array.NewStringBuilder(b.mem)
	defer bld.Release()
	bld.Reserve(len(valid))
	for i, ok := range valid {
		if !ok {
			bld.AppendNull()
			continue
		}
		b.buf = c.str(lo+int64(i), b.buf)
		bld.BinaryBuilder.Append(b.buf)
	}
	return bld.NewArray()
}

func (b *batcher) lists(c *column, lo int64, valid []bool) arrow.Array {
	elem := kindSeq.arrowType().(*arrow.ListType).ElemField()
	bld := array.NewListBuilderWithField(b.mem, elem)
	defer bld.Release()
	items := bld.ValueBuilder().(*array.Int64Builder)
	for i, ok := range valid {
		if !ok {
			bld.AppendNull()
			continue
		}
		id := lo + int64(i)
		n := c.seqLen(id, b.cfg.ListMax)
		bld.Append(true)
		for k := 0; k < n; k++ {
			items.Append(c.seqItem(id, k))
		}
	}
	return bld.NewArray()
}
