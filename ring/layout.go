package ring

import (
	"sync/atomic"
	"unsafe"
)

// Protocol constants (PROTOCOL.md).
const (
	Version        = 5 // v5: the plan version in the header; v4: done request, stop reason, stall note
	PageSize       = 4096
	HeaderFixed    = 2048 // bytes before the schema table
	SchemaOffset   = HeaderFixed
	TensorEntry    = 128
	SlotHeaderSize = 64
	MaxTensors     = 256
	MinSlots       = 2
	MaxSlots       = 65536
	MaxDims        = 4
	MaxName        = 47
	TensorAlign    = 64 // protocol minimum; the producer uses DataAlign
	DataAlign      = 256

	StateRunning  = 1
	StateFinished = 2
	StateStopped  = 3

	StallTextSize = 512  // bytes of the stall note, NUL-padded
	StopTextSize  = 1024 // bytes of the stop reason, NUL-padded

	// Stop kinds: why a producer stopped (the header's stop_kind, PROTOCOL.md).
	StopNone       = 0 // running, or finished its stream
	StopSignal     = 1 // SIGINT or SIGTERM, or its launcher went away
	StopDone       = 2 // a consumer said the job is done (shml_done)
	StopIdle       = 3 // every trainer detached and none came back in time
	StopAbandoned  = 4 // a rank's trainer left and none came back in time (--drain-timeout)
	StopUnattached = 5 // a rank no trainer attached to in time
	StopError      = 6 // an error: a damaged file, a full disk, ...

	FlagEndOfEpoch  = 1 << 0
	FlagEndOfStream = 1 << 1
	knownFlags      = FlagEndOfEpoch | FlagEndOfStream
)

// Magic is the first 8 bytes of every segment.
var Magic = [8]byte{'S', 'H', 'M', 'L', 'R', 'I', 'N', 'G'}

// Header is the segment header at offset 0. Ownership: identity fields are written by the
// producer before Version and never change; hot fields say who writes them.
type Header struct {
	Magic          [8]byte
	Version        atomic.Uint32 // P; [HDR] release-store last, acquire-load by consumers
	HeaderSize     uint32
	TotalSize      uint64
	SlotSize       uint64
	SlotCount      uint32
	SchemaCount    uint32
	SchemaOffset   uint32
	Rank           uint32
	Ranks          uint32
	ProducerPID    uint32
	ProducerStart  uint64
	BatchCapacity  uint32
	SlotHeaderSize uint32
	ConfigHash     uint64
	Job            [48]byte

	// Line 1: written by the producer only.
	Head     atomic.Uint64 // P; [PUB] publishes the slots below it, consumer acquire-loads
	HeadBell atomic.Uint32 // P; futex word the consumer sleeps on
	State    atomic.Uint32 // P; [STATE] running / finished / stopped
	SeekAck  atomic.Uint64 // P; last seek generation applied (diagnostics)
	// Counters for observers (status, metrics), never read by the protocol itself.
	ProdWaitNs atomic.Uint64 // P; nanoseconds the producer has waited for a free slot
	RowsOut    atomic.Uint64 // P; rows published in batches
	PubEpoch   atomic.Uint64 // P; epoch of the last batch published
	PubStep    atomic.Uint64 // P; step after the last batch published
	_          [72]byte

	// Line 2: written by the consumer only.
	Tail        atomic.Uint64 // C; [REL] frees the slots below it, producer acquire-loads
	TailBell    atomic.Uint32 // C; futex word the producer sleeps on
	ConsumerPID atomic.Uint32 // C; 0 when none is attached
	// Counters for observers (status, metrics), never read by the protocol itself.
	ConsWaitNs atomic.Uint64 // C; nanoseconds consumers of this ring have waited in next
	ConsRows   atomic.Uint64 // C; rows of the batches taken
	ConsEpoch  atomic.Uint64 // C; epoch of the last batch taken
	ConsStep   atomic.Uint64 // C; step after the last batch taken
	_          [80]byte

	// Line 3: control, rarely written.
	ConsWaiting atomic.Uint32 // C; nonzero while the consumer may sleep on HeadBell
	ProdWaiting atomic.Uint32 // P; nonzero while the producer may sleep on TailBell
	SeekSeq     atomic.Uint64 // C; [SEEK] seqlock, odd while a request is being written
	SeekEpoch   atomic.Uint64 // C; valid when SeekSeq is even
	SeekStep    atomic.Uint64 // C; valid when SeekSeq is even
	SeekBase    atomic.Uint64 // C; valid when SeekSeq is even: global batch the epoch starts at
	// Identity of the job's layout, written by the producer before Version, never changed:
	// with Ranks, what a trainer's saved state needs to resume under another world size.
	Nodes        uint32 // P; hosts of the job, >= 1
	NodeRank     uint32 // P; this host's index, < Nodes
	ElasticLimit uint64 // P; the latest global batch an epoch may start at (a resume under another world size)
	// What a run holds, for len(loader) and seek range checks.
	StepsPerEpoch uint64 // P; this rank's steps in an epoch that starts at global batch 0
	Epochs        uint64 // P; epochs the run serves, 0: endless
	GlobalBatches uint64 // P; global batches per epoch, over every node and rank
	// The job's end and its waits, in words (PROTOCOL.md "Stop reasons and stall notes").
	ConsDone atomic.Uint32 // C; [DONE] nonzero once a consumer said the job is done (shml_done)
	StopKind atomic.Uint32 // P; why the producer stopped (Stop*), stored before [STATE] stopped
	StallSeq atomic.Uint64 // P; [NOTE] seqlock over StallText: odd while it is rewritten
	// Identity: the plan whose rules the ring's positions follow (producer/plan.Version; 0:
	// none, a test producer). A trainer's saved state carries it, and a resume checks it.
	PlanVersion uint32 // P
	_           [28]byte
	StallText   [StallTextSize]byte // P; why this rank has no batch now, "" if it is not waiting
	StopText    [StopTextSize]byte  // P; why the producer stopped; written before [STATE] stopped
}

// TensorDesc is one schema table entry. Written by the producer before Version.
type TensorDesc struct {
	Name     [48]byte
	DType    DType
	NDim     uint32
	Shape    [MaxDims]uint64
	Offset   uint64
	RowBytes uint64
	NBytes   uint64
	_        [16]byte
}

// SlotHeader starts every slot. Written by the producer before [PUB], read by the
// consumer after it.
type SlotHeader struct {
	Seq   uint64
	Epoch uint64
	Step  uint64
	Rows  uint32
	Flags uint32
	Gen   uint64
	Base  uint64 // global batch at which this batch's epoch started (nonzero only in a resumed epoch)
	_     [16]byte
}

// Compile-time size checks; the golden-file test checks every offset.
var (
	_ [HeaderFixed]byte    = [unsafe.Sizeof(Header{})]byte{}
	_ [TensorEntry]byte    = [unsafe.Sizeof(TensorDesc{})]byte{}
	_ [SlotHeaderSize]byte = [unsafe.Sizeof(SlotHeader{})]byte{}
)

func headerAt(mem []byte) *Header { return (*Header)(unsafe.Pointer(&mem[0])) }

func tensorAt(mem []byte, i int) *TensorDesc {
	return (*TensorDesc)(unsafe.Pointer(&mem[SchemaOffset+i*TensorEntry]))
}

// asBytes views a header as its 512 bytes.
func asBytes(h *Header) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(h)), HeaderFixed) }

func slotHeaderAt(mem []byte, off uint64) *SlotHeader {
	return (*SlotHeader)(unsafe.Pointer(&mem[off]))
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func tensorReserved(d *TensorDesc) []byte {
	b := (*[TensorEntry]byte)(unsafe.Pointer(d))
	return b[112:]
}
