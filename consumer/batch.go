package consumer

import (
	"unsafe"

	"github.com/shmloader/shmloader/ring"
)

// Batch is a held slot. Its tensors view shared memory: they are valid until the batch is
// released, after which the producer may overwrite them.
type Batch struct {
	Seq, Epoch, Step uint64
	Base             uint64 // global batch at which the epoch started (nonzero only in a resumed epoch)
	Rows             int
	Tensors          []Tensor
}

// Tensor is one named tensor of a batch, shape [rows, per-row dims...].
type Tensor struct {
	Name  string
	DType ring.DType
	Shape []int
	Data  []byte // rows * row bytes, in shared memory
}

// Tensor returns the tensor called name.
func (b *Batch) Tensor(name string) (Tensor, bool) {
	for _, t := range b.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

func newBatch(v ring.View, g *ring.Geometry) *Batch {
	b := &Batch{Seq: v.Seq, Epoch: v.Epoch, Step: v.Step, Base: v.Base, Rows: int(v.Rows), Tensors: make([]Tensor, len(g.Tensors))}
	for i, t := range g.Tensors {
		n := t.RowBytes * uint64(v.Rows)
		b.Tensors[i] = Tensor{Name: t.Name, DType: t.DType, Shape: append([]int{int(v.Rows)}, t.Shape...),
			Data: v.Mem[t.Offset : t.Offset+n : t.Offset+n]}
	}
	return b
}

// view reinterprets Data as a slice of T; the caller checks the dtype.
func view[T any](t Tensor) []T {
	var z T
	if len(t.Data) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), len(t.Data)/int(unsafe.Sizeof(z)))
}

// Int64s views an int64 tensor (nil for another dtype).
func (t Tensor) Int64s() []int64 {
	if t.DType != ring.Int64 {
		return nil
	}
	return view[int64](t)
}

// Uint32s views a uint32 tensor (nil for another dtype).
func (t Tensor) Uint32s() []uint32 {
	if t.DType != ring.Uint32 {
		return nil
	}
	return view[uint32](t)
}

// Float32s views a float32 tensor (nil for another dtype).
func (t Tensor) Float32s() []float32 {
	if t.DType != ring.Float32 {
		return nil
	}
	return view[float32](t)
}
