package plan

import (
	"fmt"
	"sync"
)

// Input is what a plan depends on.
type Input struct {
	Rows             []int64 // kept rows of every row group of the dataset, by global index (0: skipped)
	BatchSize        int
	Seed             uint64
	ShuffleRowGroups bool
	Window           int // row groups whose rows are mixed; 0: rows keep file order
	DropLast         bool
	Partitions       int // canonical partitions; 0: AutoPartitions
	Ranks            int // per node
	Node, Nodes      int
}

// Plan is the schedule of every epoch for one node; safe for concurrent use.
type Plan struct {
	in       Input
	groups   []int // row groups with kept rows, in file order
	rows     int64 // kept rows per epoch
	parts    [][]int
	partRows []int64
	partLen  []int64 // batches each partition yields per epoch
	rounds   int64   // batches every partition yields: global batch j·P+p is batch j of partition p
	tail     []ref   // without drop_last: the batches after the rounds, in (batch, partition) order
	tailAt   map[ref]uint64
	world    uint64   // nodes × ranks
	mine     []int    // this node's partitions
	myTail   []uint64 // this node's tail batches, ascending

	mu     sync.Mutex
	epochs map[uint64]*Epoch // a few recent epochs
}

// ref is batch j of partition p.
type ref struct {
	p int
	j int64
}

// New checks the input, deals the row groups into partitions and fixes the per-epoch
// counts (they are the same every epoch).
func New(in Input) (*Plan, error) {
	switch {
	case in.BatchSize < 1:
		return nil, fmt.Errorf("batch_size %d: want >= 1", in.BatchSize)
	case in.Ranks < 1 || in.Nodes < 1 || in.Node < 0 || in.Node >= in.Nodes:
		return nil, fmt.Errorf("node %d of %d with %d ranks: want 0 <= node < nodes and ranks >= 1", in.Node, in.Nodes, in.Ranks)
	case in.Window < 0:
		return nil, fmt.Errorf("shuffle window %d: want >= 0", in.Window)
	case in.Partitions < 0:
		return nil, fmt.Errorf("partitions %d: want >= 0 (0: automatic)", in.Partitions)
	}
	p := &Plan{in: in, epochs: map[uint64]*Epoch{}, world: uint64(in.Ranks * in.Nodes)}
	for g, n := range in.Rows {
		if n > 0 {
			p.groups = append(p.groups, g)
			p.rows += n
		}
	}
	if p.rows == 0 {
		return nil, fmt.Errorf("no rows to serve: every row group is empty or filtered out")
	}
	if p.in.Partitions == 0 {
		p.in.Partitions = AutoPartitions(len(p.groups))
	}
	P := p.in.Partitions
	if P > len(p.groups) {
		return nil, fmt.Errorf("partitions %d: only %d row groups hold kept rows, and a partition needs at least one; lower partitions",
			P, len(p.groups))
	}
	if err := checkNodes(P, in.Nodes); err != nil {
		return nil, err
	}
	p.parts, p.partRows = split(in.Rows, p.groups, P, in.Seed)
	bs := int64(in.BatchSize)
	p.partLen = make([]int64, P)
	p.rounds = -1
	for i, n := range p.partRows {
		p.partLen[i] = n / bs
		if !in.DropLast {
			p.partLen[i] = (n + bs - 1) / bs
		}
		if p.rounds < 0 || p.partLen[i] < p.rounds {
			p.rounds = p.partLen[i]
		}
	}
	if !in.DropLast {
		p.tailAt = map[ref]uint64{}
		for j := p.rounds; ; j++ {
			n := len(p.tail)
			for i := range P {
				if j < p.partLen[i] {
					p.tailAt[ref{i, j}] = uint64(P)*uint64(p.rounds) + uint64(len(p.tail))
					p.tail = append(p.tail, ref{i, j})
				}
			}
			if len(p.tail) == n {
				break
			}
		}
	}
	for i := in.Node; i < P; i += in.Nodes {
		p.mine = append(p.mine, i)
	}
	for i, r := range p.tail {
		if r.p%in.Nodes == in.Node {
			p.myTail = append(p.myTail, p.mainBatches()+uint64(i))
		}
	}
	if in.DropLast && p.steps(0) == 0 {
		least := 0
		for i := range P {
			if p.partRows[i] < p.partRows[least] {
				least = i
			}
		}
		return nil, fmt.Errorf("batch_size %d × %d ranks: each of the %d partitions gives %d batches per epoch (the smallest holds %d rows), "+
			"too few for one batch per rank; lower batch_size or partitions, or set drop_last: false",
			in.BatchSize, p.world, P, p.rounds, p.partRows[least])
	}
	return p, nil
}

// Rows is the number of kept rows per epoch; RowGroups the row groups holding them.
func (p *Plan) Rows() int64    { return p.rows }
func (p *Plan) RowGroups() int { return len(p.groups) }

// Partitions is the partition count in force (Input.Partitions, or the automatic one).
func (p *Plan) Partitions() int { return p.in.Partitions }

// NodePartitions lists the partitions this node serves: p ≡ node (mod nodes).
func (p *Plan) NodePartitions() []int { return p.mine }

// PartitionRowGroups lists partition i's row groups in file order.
func (p *Plan) PartitionRowGroups(i int) []int { return p.parts[i] }

// NodeRows is the number of kept rows in this node's partitions.
func (p *Plan) NodeRows() int64 {
	var n int64
	for _, i := range p.mine {
		n += p.partRows[i]
	}
	return n
}

// mainBatches is the number of global batches in the rounds: P × rounds.
func (p *Plan) mainBatches() uint64 { return uint64(p.in.Partitions) * uint64(p.rounds) }

// GlobalBatches is the number of global batches an epoch serves over all nodes.
func (p *Plan) GlobalBatches() uint64 {
	if p.in.DropLast {
		return p.steps(0) * p.world
	}
	return p.mainBatches() + uint64(len(p.tail))
}

// DroppedRows is the number of kept rows per epoch that no batch serves (drop_last).
func (p *Plan) DroppedRows() int64 {
	return p.rows - p.servedRows()
}

func (p *Plan) servedRows() int64 {
	if !p.in.DropLast {
		return p.rows
	}
	return int64(p.GlobalBatches()) * int64(p.in.BatchSize)
}

// steps is, with drop_last, every rank's step count in an epoch started at global batch
// base: the whole steps of the world that fit in the rounds from base on.
func (p *Plan) steps(base uint64) uint64 {
	if m := p.mainBatches(); base < m {
		return (m - base) / p.world
	}
	return 0
}

// locate says which partition and batch of it global batch g is.
func (p *Plan) locate(g uint64) ref {
	P := uint64(p.in.Partitions)
	if g < p.mainBatches() {
		return ref{int(g % P), int64(g / P)}
	}
	return p.tail[g-p.mainBatches()]
}

// BatchRows is the number of rows of global batch g (short only for a partition's last
// batch without drop_last).
func (p *Plan) BatchRows(g uint64) int {
	r := p.locate(g)
	bs := int64(p.in.BatchSize)
	return int(min(bs, p.partRows[r.p]-r.j*bs))
}

// MaxBatchRows is the most rows any batch this node serves holds, in every epoch and from
// every base: a partition's first batch is its largest, min(batch_size, its rows). So it
// is batch_size with drop_last (every partition yields a full batch), and without it may
// be less: than the dataset's rows, too, when the node has several partitions. Ring slots
// are sized for it.
func (p *Plan) MaxBatchRows() int {
	bs := int64(p.in.BatchSize)
	var most int64
	for _, i := range p.mine {
		most = max(most, min(bs, p.partRows[i]))
	}
	return int(most)
}

// Partition is the partition that global batch g comes from.
func (p *Plan) Partition(g uint64) int { return p.locate(g).p }
