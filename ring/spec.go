package ring

import (
	"fmt"

	"github.com/shmloader/shmloader/shm"
)

// TensorSpec declares one tensor of every slot: per-row shape, batch dimension implicit.
type TensorSpec struct {
	Name  string
	DType DType
	Shape []int
}

// Spec is what a producer wants a ring to look like.
type Spec struct {
	Job           string
	Rank, Ranks   int
	SlotCount     int // ring depth
	BatchCapacity int // rows per slot
	Tensors       []TensorSpec
	ConfigHash    uint64
	// The job's layout across hosts (0, 0: one host), and the latest global batch an epoch
	// may start at when a trainer resumes under another world size (0: only at its start).
	Nodes, NodeRank int
	ElasticLimit    uint64
	// What the run holds: this rank's steps in an epoch started at global batch 0, the
	// epochs served (0: endless), and the global batches of an epoch over the whole job.
	StepsPerEpoch, Epochs, GlobalBatches uint64
	// The plan whose rules the positions follow (producer/plan.Version; 0: none).
	PlanVersion uint32
}

// Layout checks spec and places its tensors: each at a DataAlign boundary after the slot
// header, slots rounded up to whole pages.
func (s Spec) Layout() (*Geometry, error) {
	if err := shm.ValidateJob(s.Job); err != nil {
		return nil, err
	}
	switch {
	case s.Ranks < 1 || s.Rank < 0 || s.Rank >= s.Ranks:
		return nil, fmt.Errorf("rank %d of %d: want 0 <= rank < ranks", s.Rank, s.Ranks)
	case s.Nodes < 0 || s.NodeRank < 0 || s.NodeRank >= max(s.Nodes, 1) || s.Nodes > 1<<20:
		return nil, fmt.Errorf("node %d of %d: want 0 <= node rank < nodes <= %d", s.NodeRank, s.Nodes, 1<<20)
	case s.SlotCount < MinSlots || s.SlotCount > MaxSlots:
		return nil, fmt.Errorf("ring depth %d outside %d..%d", s.SlotCount, MinSlots, MaxSlots)
	case s.BatchCapacity < 1 || s.BatchCapacity > 1<<30:
		return nil, fmt.Errorf("batch capacity %d outside 1..%d", s.BatchCapacity, 1<<30)
	case len(s.Tensors) < 1 || len(s.Tensors) > MaxTensors:
		return nil, fmt.Errorf("%d tensors, want 1..%d", len(s.Tensors), MaxTensors)
	}
	g := &Geometry{SlotCount: uint32(s.SlotCount), BatchCapacity: uint32(s.BatchCapacity),
		Rank: uint32(s.Rank), Ranks: uint32(s.Ranks), ConfigHash: s.ConfigHash, Job: s.Job,
		Nodes: uint32(max(s.Nodes, 1)), NodeRank: uint32(s.NodeRank), ElasticLimit: s.ElasticLimit,
		StepsPerEpoch: s.StepsPerEpoch, Epochs: s.Epochs, GlobalBatches: s.GlobalBatches,
		PlanVersion: s.PlanVersion}
	off := uint64(SlotHeaderSize)
	seen := map[string]bool{}
	for _, t := range s.Tensors {
		if err := checkTensorSpec(t, seen); err != nil {
			return nil, err
		}
		row := uint64(t.DType.Size())
		for _, d := range t.Shape {
			row *= uint64(d)
		}
		if row > (1<<40)/uint64(s.BatchCapacity) {
			return nil, fmt.Errorf("tensor %q: %d rows of %d bytes is too large for a slot", t.Name, s.BatchCapacity, row)
		}
		off = alignUp(off, DataAlign)
		g.Tensors = append(g.Tensors, Tensor{Name: t.Name, DType: t.DType, Shape: append([]int(nil), t.Shape...),
			Offset: off, RowBytes: row, NBytes: row * uint64(s.BatchCapacity)})
		off += row * uint64(s.BatchCapacity)
	}
	g.SlotSize = alignUp(off, PageSize)
	g.HeaderSize = alignUp(HeaderFixed+uint64(len(s.Tensors))*TensorEntry, PageSize)
	g.TotalSize = g.HeaderSize + uint64(s.SlotCount)*g.SlotSize
	return g, nil
}

func checkTensorSpec(t TensorSpec, seen map[string]bool) error {
	if t.Name == "" || len(t.Name) > MaxName {
		return fmt.Errorf("tensor name %q: want 1..%d characters", t.Name, MaxName)
	}
	for _, c := range []byte(t.Name) {
		if !validNameByte(c) {
			return fmt.Errorf("tensor name %q: character %q not in [A-Za-z0-9_.:/-]", t.Name, c)
		}
	}
	if seen[t.Name] {
		return fmt.Errorf("tensor name %q used twice", t.Name)
	}
	seen[t.Name] = true
	if t.DType.Size() == 0 {
		return fmt.Errorf("tensor %q: unknown dtype %d", t.Name, t.DType)
	}
	if len(t.Shape) > MaxDims {
		return fmt.Errorf("tensor %q: %d per-row dimensions, at most %d", t.Name, len(t.Shape), MaxDims)
	}
	for _, d := range t.Shape {
		if d < 1 || d > 1<<30 {
			return fmt.Errorf("tensor %q: dimension %d outside 1..%d", t.Name, d, 1<<30)
		}
	}
	return nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }
