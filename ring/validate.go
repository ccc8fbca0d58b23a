package ring

import (
	"bytes"
	"fmt"
	"math/bits"
	"sort"
	"unsafe"
)

// Tensor is one validated schema entry.
type Tensor struct {
	Name     string
	DType    DType
	Shape    []int // per-row dimensions; the batch dimension is implicit
	Offset   uint64
	RowBytes uint64
	NBytes   uint64
}

// Geometry is a validated header: everything a consumer needs, copied out of shared
// memory so that a later change there cannot move an offset under us.
type Geometry struct {
	HeaderSize    uint64
	TotalSize     uint64
	SlotSize      uint64
	SlotCount     uint32
	BatchCapacity uint32
	Rank, Ranks   uint32
	Nodes         uint32 // hosts of the job: the world is Ranks × Nodes trainers
	NodeRank      uint32
	ElasticLimit  uint64 // the latest global batch an epoch may start at
	StepsPerEpoch uint64 // this rank's steps in an epoch that starts at global batch 0
	Epochs        uint64 // epochs the run serves, 0: endless
	GlobalBatches uint64 // global batches per epoch, over the whole job
	PlanVersion   uint32 // the plan whose rules the positions follow (0: none)
	ProducerPID   uint32
	ProducerStart uint64
	ConfigHash    uint64
	Job           string
	Tensors       []Tensor
}

// SlotOffset is the byte offset of slot i.
func (g *Geometry) SlotOffset(i uint64) uint64 { return g.HeaderSize + i*g.SlotSize }

// Validate checks the header and schema table at the start of mem, a mapping of a whole
// segment, in the order of PROTOCOL.md, and returns a private copy of the geometry. job
// and rank are what the caller expects (rank < 0 skips the identity check). It never reads
// outside mem and never panics; each failure wraps its own sentinel error.
func Validate(mem []byte, job string, rank int) (*Geometry, error) {
	if len(mem) < HeaderFixed {
		return nil, fmt.Errorf("%w: file is %d bytes, the header alone needs %d", ErrSize, len(mem), HeaderFixed)
	}
	if !bytes.Equal(mem[:8], Magic[:]) {
		if bytes.Equal(mem[:12], make([]byte, 12)) {
			return nil, ErrNotReady // the producer has not written the header yet
		}
		return nil, fmt.Errorf("%w (%q)", ErrMagic, mem[:8])
	}
	// [HDR] acquire: everything before version was written before it.
	switch v := headerAt(mem).Version.Load(); v {
	case 0:
		return nil, ErrNotReady
	case Version:
	default:
		return nil, fmt.Errorf("%w: segment speaks version %d, this build speaks %d", ErrVersion, v, Version)
	}
	var h Header // private copy: later writes to shared memory cannot change what we checked
	copy(asBytes(&h), mem)
	g, err := validateGeometry(&h, uint64(len(mem)))
	if err != nil {
		return nil, err
	}
	if rank >= 0 && (!bytes.Equal(h.Job[:], padded(job)) || g.Rank != uint32(rank)) {
		return nil, fmt.Errorf("%w: segment belongs to job %q rank %d, expected job %q rank %d",
			ErrCorrupt, g.Job, g.Rank, job, rank)
	}
	table := make([]TensorDesc, h.SchemaCount)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(table))), len(table)*TensorEntry), mem[SchemaOffset:])
	if g.Tensors, err = validateSchema(table, int(h.SchemaCount), g); err != nil {
		return nil, err
	}
	return g, nil
}

// padded is job as the header's NUL-padded job field holds it.
func padded(job string) []byte {
	b := make([]byte, len(Header{}.Job))
	copy(b[:len(b)-1], job)
	return b
}

func validateGeometry(h *Header, fileSize uint64) (*Geometry, error) {
	bad := func(format string, a ...any) error { return fmt.Errorf("%w: "+format, append([]any{ErrSize}, a...)...) }
	switch {
	case h.TotalSize != fileSize:
		return nil, bad("total_size %d but the file is %d bytes", h.TotalSize, fileSize)
	case h.SchemaOffset != SchemaOffset:
		return nil, bad("schema_offset %d, want %d", h.SchemaOffset, SchemaOffset)
	case h.SlotHeaderSize != SlotHeaderSize:
		return nil, bad("slot_header_size %d, want %d", h.SlotHeaderSize, SlotHeaderSize)
	case h.SchemaCount < 1 || h.SchemaCount > MaxTensors:
		return nil, bad("schema_count %d outside 1..%d", h.SchemaCount, MaxTensors)
	case h.HeaderSize%PageSize != 0 || uint64(h.HeaderSize) < HeaderFixed+uint64(h.SchemaCount)*TensorEntry:
		return nil, bad("header_size %d not a page multiple holding %d schema entries", h.HeaderSize, h.SchemaCount)
	case h.SlotSize%PageSize != 0 || h.SlotSize <= SlotHeaderSize:
		return nil, bad("slot_size %d not a page multiple above %d", h.SlotSize, SlotHeaderSize)
	case h.SlotCount < MinSlots || h.SlotCount > MaxSlots:
		return nil, bad("slot_count %d outside %d..%d", h.SlotCount, MinSlots, MaxSlots)
	case h.BatchCapacity < 1:
		return nil, bad("batch_capacity 0")
	case h.Rank >= h.Ranks:
		return nil, bad("rank %d not below ranks %d", h.Rank, h.Ranks)
	case h.NodeRank >= h.Nodes:
		return nil, bad("node_rank %d not below nodes %d", h.NodeRank, h.Nodes)
	}
	hi, slots := bits.Mul64(uint64(h.SlotCount), h.SlotSize)
	total, carry := bits.Add64(slots, uint64(h.HeaderSize), 0)
	if hi != 0 || carry != 0 || total != h.TotalSize {
		return nil, bad("header_size %d + %d slots of %d bytes != total_size %d", h.HeaderSize, h.SlotCount, h.SlotSize, h.TotalSize)
	}
	return &Geometry{
		HeaderSize: uint64(h.HeaderSize), TotalSize: h.TotalSize, SlotSize: h.SlotSize,
		SlotCount: h.SlotCount, BatchCapacity: h.BatchCapacity, Rank: h.Rank, Ranks: h.Ranks,
		Nodes: h.Nodes, NodeRank: h.NodeRank, ElasticLimit: h.ElasticLimit,
		StepsPerEpoch: h.StepsPerEpoch, Epochs: h.Epochs, GlobalBatches: h.GlobalBatches,
		PlanVersion: h.PlanVersion, ProducerPID: h.ProducerPID, ProducerStart: h.ProducerStart,
		ConfigHash: h.ConfigHash, Job: cstring(h.Job[:]),
	}, nil
}

func validateSchema(table []TensorDesc, n int, g *Geometry) ([]Tensor, error) {
	out := make([]Tensor, 0, n)
	seen := map[string]bool{}
	for i := range n {
		d := &table[i]
		t, err := validateTensor(d, g)
		if err == nil && seen[t.Name] {
			err = fmt.Errorf("%w: duplicate name", ErrSchema)
		}
		if err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	// No two extents overlap: sort by offset and compare neighbours.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return out[idx[a]].Offset < out[idx[b]].Offset })
	for k := 1; k < n; k++ {
		prev, cur := out[idx[k-1]], out[idx[k]]
		if prev.Offset+prev.NBytes > cur.Offset {
			return nil, fmt.Errorf("%w: tensors %q and %q overlap", ErrOffset, prev.Name, cur.Name)
		}
	}
	return out, nil
}

func validateTensor(d *TensorDesc, g *Geometry) (Tensor, error) {
	bad := func(format string, a ...any) (Tensor, error) {
		return Tensor{}, fmt.Errorf("%w: "+format, append([]any{ErrSchema}, a...)...)
	}
	end := bytes.IndexByte(d.Name[:], 0)
	if end <= 0 || end > MaxName {
		return bad("name not NUL-terminated or empty")
	}
	name := string(d.Name[:end])
	for _, c := range d.Name[end:] {
		if c != 0 {
			return bad("%q: bytes after the name's NUL", name)
		}
	}
	for _, c := range []byte(name) {
		if !validNameByte(c) {
			return bad("%q: character %q not allowed", name, c)
		}
	}
	if d.DType.Size() == 0 {
		return bad("%q: unknown dtype %d", name, d.DType)
	}
	if d.NDim > MaxDims {
		return bad("%q: ndim %d above %d", name, d.NDim, MaxDims)
	}
	for _, c := range tensorReserved(d) {
		if c != 0 {
			return bad("%q: reserved bytes not zero", name)
		}
	}
	rowBytes := uint64(d.DType.Size())
	shape := make([]int, d.NDim)
	for i, s := range d.Shape {
		if (uint32(i) < d.NDim) != (s >= 1) {
			return bad("%q: shape %v does not match ndim %d", name, d.Shape, d.NDim)
		}
		if s == 0 {
			continue
		}
		hi, lo := bits.Mul64(rowBytes, s)
		if hi != 0 || lo > g.SlotSize {
			return bad("%q: row size overflows the slot", name)
		}
		rowBytes = lo
		shape[i] = int(s)
	}
	if d.RowBytes != rowBytes {
		return bad("%q: row_bytes %d, shape says %d", name, d.RowBytes, rowBytes)
	}
	hi, nb := bits.Mul64(uint64(g.BatchCapacity), rowBytes)
	if hi != 0 || d.NBytes != nb {
		return bad("%q: nbytes %d, want batch_capacity*row_bytes", name, d.NBytes)
	}
	end64, carry := bits.Add64(d.Offset, d.NBytes, 0)
	if d.Offset%TensorAlign != 0 || d.Offset < SlotHeaderSize || carry != 0 || end64 > g.SlotSize {
		return Tensor{}, fmt.Errorf("%w: %q at offset %d size %d, slot is %d bytes (offset must be a multiple of %d, >= %d)",
			ErrOffset, name, d.Offset, d.NBytes, g.SlotSize, TensorAlign, SlotHeaderSize)
	}
	return Tensor{Name: name, DType: d.DType, Shape: shape, Offset: d.Offset, RowBytes: rowBytes, NBytes: d.NBytes}, nil
}

func validNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == ':' || c == '/' || c == '-'
}

// CheckSlot validates a slot header read at consumer position cursor (PROTOCOL.md).
func (g *Geometry) CheckSlot(s *SlotHeader, cursor uint64) error {
	marker := s.Flags & knownFlags
	switch {
	case s.Seq != cursor:
		return fmt.Errorf("%w: slot holds seq %d, expected %d", ErrCorrupt, s.Seq, cursor)
	case s.Rows > g.BatchCapacity:
		return fmt.Errorf("%w: seq %d has %d rows, capacity %d", ErrCorrupt, s.Seq, s.Rows, g.BatchCapacity)
	case s.Flags&^knownFlags != 0:
		return fmt.Errorf("%w: seq %d has unknown flags %#x", ErrCorrupt, s.Seq, s.Flags)
	case marker == knownFlags || (marker != 0 && s.Rows != 0):
		return fmt.Errorf("%w: seq %d is a malformed marker (flags %#x, rows %d)", ErrCorrupt, s.Seq, s.Flags, s.Rows)
	case s.Base > g.ElasticLimit:
		return fmt.Errorf("%w: seq %d starts its epoch at global batch %d, past the limit %d", ErrCorrupt, s.Seq, s.Base, g.ElasticLimit)
	}
	return nil
}
