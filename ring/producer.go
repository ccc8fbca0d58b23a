package ring

import (
	"fmt"
	"os"
	"time"
)

// Producer is the writing end of one ring. One goroutine uses it at a time; Published,
// Released, Drained, Occupancy and ConsumerPID may also be called from any other.
type Producer struct {
	mem  []byte
	h    *Header
	g    *Geometry
	head uint64 // private copy of h.Head: the producer is its only writer
	gen  uint64 // seek generation stamped into published slots
	w    waiter

	soughtBase uint64 // base of the seek PollSeek last returned
	stall      string // the stall note last written
}

// Slot is a slot the producer owns between Acquire and Publish.
type Slot struct {
	Seq uint64
	mem []byte // the whole slot
	g   *Geometry
}

// Tensor returns the bytes reserved for tensor i in the slot (capacity rows).
func (s *Slot) Tensor(i int) []byte {
	t := &s.g.Tensors[i]
	return s.mem[t.Offset : t.Offset+t.NBytes : t.Offset+t.NBytes]
}

// NewProducer formats mem, a fresh mapping of g.TotalSize bytes, as a ring laid out by g
// (from Spec.Layout), and publishes its header by storing the version last.
func NewProducer(mem []byte, g *Geometry) (*Producer, error) {
	if uint64(len(mem)) != g.TotalSize {
		return nil, fmt.Errorf("ring: mapping is %d bytes, layout needs %d", len(mem), g.TotalSize)
	}
	h := headerAt(mem)
	h.Magic = Magic
	h.HeaderSize = uint32(g.HeaderSize)
	h.TotalSize = g.TotalSize
	h.SlotSize = g.SlotSize
	h.SlotCount = g.SlotCount
	h.SchemaCount = uint32(len(g.Tensors))
	h.SchemaOffset = SchemaOffset
	h.Rank, h.Ranks = g.Rank, g.Ranks
	h.Nodes, h.NodeRank, h.ElasticLimit = max(g.Nodes, 1), g.NodeRank, g.ElasticLimit
	h.StepsPerEpoch, h.Epochs, h.GlobalBatches = g.StepsPerEpoch, g.Epochs, g.GlobalBatches
	h.PlanVersion = g.PlanVersion
	h.ProducerPID = uint32(os.Getpid())
	h.ProducerStart, _ = ProcStart(os.Getpid())
	h.BatchCapacity = g.BatchCapacity
	h.SlotHeaderSize = SlotHeaderSize
	h.ConfigHash = g.ConfigHash
	copy(h.Job[:], g.Job)
	for i, t := range g.Tensors {
		d := tensorAt(mem, i)
		copy(d.Name[:], t.Name)
		d.DType, d.NDim = t.DType, uint32(len(t.Shape))
		for k, s := range t.Shape {
			d.Shape[k] = uint64(s)
		}
		d.Offset, d.RowBytes, d.NBytes = t.Offset, t.RowBytes, t.NBytes
	}
	g.ProducerPID, g.ProducerStart = h.ProducerPID, h.ProducerStart
	h.State.Store(StateRunning)
	h.Version.Store(Version) // [HDR] release: the header above is complete
	p := &Producer{mem: mem, h: h, g: g}
	p.w = waiter{bell: &h.TailBell, waiting: &h.ProdWaiting, check: func() error { return nil }, spin: min(SpinFor, producerSpin)}
	return p, nil
}

// Geometry is the ring's layout.
func (p *Producer) Geometry() *Geometry { return p.g }

// free returns the number of slots the producer may fill now, or an error if the
// consumer's tail is impossible.
func (p *Producer) free() (uint64, error) {
	tail := p.h.Tail.Load() // [REL] acquire: the consumer is done with slots below tail
	if tail > p.head || p.head-tail > uint64(p.g.SlotCount) {
		return 0, fmt.Errorf("%w: tail %d against head %d", ErrCorrupt, tail, p.head)
	}
	return uint64(p.g.SlotCount) - (p.head - tail), nil
}

// Acquire waits up to timeout (< 0: forever) for a free slot and returns it. ErrTimeout
// means the consumer has not freed one; callers loop to check their own stop conditions.
func (p *Producer) Acquire(timeout time.Duration) (*Slot, error) {
	var ferr error
	ready := func() bool {
		n, err := p.free()
		ferr = err
		return n > 0 || err != nil
	}
	if !ready() {
		start := time.Now()
		err := p.w.wait(ready, timeout)
		p.h.ProdWaitNs.Add(uint64(time.Since(start)))
		if err != nil {
			return nil, err
		}
	}
	if ferr != nil {
		return nil, ferr
	}
	off := p.g.SlotOffset(p.head % uint64(p.g.SlotCount))
	return &Slot{Seq: p.head, mem: p.mem[off : off+p.g.SlotSize : off+p.g.SlotSize], g: p.g}, nil
}

// Publish makes slot s visible to the consumer as batch (epoch, step) with rows rows.
func (p *Producer) Publish(s *Slot, epoch, step uint64, rows int) {
	p.publish(s, epoch, step, 0, uint32(rows), 0)
}

// PublishFrom is Publish for a batch of an epoch started at global batch base.
func (p *Producer) PublishFrom(s *Slot, epoch, step, base uint64, rows int) {
	p.publish(s, epoch, step, base, uint32(rows), 0)
}

// PublishMarker publishes s as an END_OF_EPOCH or END_OF_STREAM marker.
func (p *Producer) PublishMarker(s *Slot, flag uint32, epoch uint64) {
	p.publish(s, epoch, 0, 0, 0, flag)
}

func (p *Producer) publish(s *Slot, epoch, step, base uint64, rows, flags uint32) {
	if s.Seq != p.head {
		panic(fmt.Sprintf("ring: publish of seq %d, head is %d", s.Seq, p.head))
	}
	sh := slotHeaderAt(s.mem, 0)
	*sh = SlotHeader{Seq: s.Seq, Epoch: epoch, Step: step, Rows: rows, Flags: flags, Gen: p.gen, Base: base}
	if flags == 0 {
		p.h.RowsOut.Add(uint64(rows))
		p.h.PubEpoch.Store(epoch)
		p.h.PubStep.Store(step + 1)
	}
	p.head++
	p.h.Head.Store(p.head) // [PUB] release (seq-cst): the slot above is complete
	ring(&p.h.HeadBell, &p.h.ConsWaiting)
}

// SoughtBase is the global batch at which the epoch of the seek PollSeek last returned
// starts (0: at its start).
func (p *Producer) SoughtBase() uint64 { return p.soughtBase }

// PollSeek returns a new seek request from the consumer, if there is one, and from now
// on stamps the request's generation into published slots (PROTOCOL.md, "Seek").
func (p *Producer) PollSeek() (epoch, step uint64, ok bool) {
	s1 := p.h.SeekSeq.Load() // [SEEK] acquire
	if s1%2 != 0 || s1/2 == p.gen {
		return 0, 0, false
	}
	epoch, step, base := p.h.SeekEpoch.Load(), p.h.SeekStep.Load(), p.h.SeekBase.Load()
	if p.h.SeekSeq.Load() != s1 {
		return 0, 0, false // being rewritten; the next poll sees it whole
	}
	p.gen, p.soughtBase = s1/2, base
	p.h.SeekAck.Store(p.gen)
	return epoch, step, true
}

// Drained reports whether the consumer has released everything published.
func (p *Producer) Drained() bool { return p.h.Tail.Load() == p.h.Head.Load() }

// Released is the number of slots the consumer has released (its tail).
func (p *Producer) Released() uint64 { return p.h.Tail.Load() }

// Published is the number of slots published so far.
func (p *Producer) Published() uint64 { return p.h.Head.Load() }

// Occupancy is the number of published slots the consumer has not released.
func (p *Producer) Occupancy() uint64 {
	tail := p.h.Tail.Load()
	head := p.h.Head.Load()
	if tail > head || head-tail > uint64(p.g.SlotCount) {
		return uint64(p.g.SlotCount) // an impossible tail: Acquire reports it
	}
	return head - tail
}

// Counters are the ring's observer counters (PROTOCOL.md): what status and metrics show.
type Counters struct {
	ProducerWait, ConsumerWait time.Duration // waiting for a free slot / for a batch
	RowsOut, RowsIn            uint64        // rows published / taken by consumers
	PubEpoch, PubStep          uint64        // position after the last batch published
	ConsEpoch, ConsStep        uint64        // position after the last batch taken
	Occupancy                  uint64        // published slots not yet released
	ConsumerPID                uint32        // the attached consumer's pid, 0 if none
}

// Counters reads the observer counters; any goroutine may call it.
func (p *Producer) Counters() Counters { return readCounters(p.h, p.g.SlotCount) }

// ReadCounters reads the observer counters of a segment that Validate accepted as g:
// what an observer process (`shmloader status`) shows. mem may be mapped read-only.
func ReadCounters(mem []byte, g *Geometry) Counters { return readCounters(headerAt(mem), g.SlotCount) }

func readCounters(h *Header, slots uint32) Counters {
	c := Counters{
		ProducerWait: time.Duration(h.ProdWaitNs.Load()), ConsumerWait: time.Duration(h.ConsWaitNs.Load()),
		RowsOut: h.RowsOut.Load(), RowsIn: h.ConsRows.Load(),
		PubEpoch: h.PubEpoch.Load(), PubStep: h.PubStep.Load(),
		ConsEpoch: h.ConsEpoch.Load(), ConsStep: h.ConsStep.Load(), ConsumerPID: h.ConsumerPID.Load(),
	}
	if tail, head := h.Tail.Load(), h.Head.Load(); tail <= head && head-tail <= uint64(slots) {
		c.Occupancy = head - tail
	}
	return c
}

// ConsumerPID is the pid the attached consumer announced, 0 if none.
func (p *Producer) ConsumerPID() uint32 { return p.h.ConsumerPID.Load() }

// SetState stores a new state (finished or stopped) and wakes the consumer.
func (p *Producer) SetState(state uint32) {
	p.h.State.Store(state) // [STATE] release
	p.h.HeadBell.Add(1)
	futexWake(&p.h.HeadBell)
}
