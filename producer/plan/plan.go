package plan

import (
	"fmt"
	"sort"
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
	Ranks            int // per node
	Node, Nodes      int
}

// Plan is the schedule of every epoch; safe for concurrent use.
type Plan struct {
	in      Input
	groups  []int // row groups with kept rows, in file order
	rows    int64 // kept rows per epoch
	batches uint64
	lo, hi  uint64 // this node's global batches

	mu     sync.Mutex
	epochs map[uint64]*Epoch // a few recent epochs
}

// New checks the input and fixes the per-epoch counts (they are the same every epoch).
func New(in Input) (*Plan, error) {
	switch {
	case in.BatchSize < 1:
		return nil, fmt.Errorf("batch_size %d: want >= 1", in.BatchSize)
	case in.Ranks < 1 || in.Nodes < 1 || in.Node < 0 || in.Node >= in.Nodes:
		return nil, fmt.Errorf("node %d of %d with %d ranks: want 0 <= node < nodes and ranks >= 1", in.Node, in.Nodes, in.Ranks)
	case in.Window < 0:
		return nil, fmt.Errorf("shuffle window %d: want >= 0", in.Window)
	}
	p := &Plan{in: in, epochs: map[uint64]*Epoch{}}
	for g, n := range in.Rows {
		if n > 0 {
			p.groups = append(p.groups, g)
			p.rows += n
		}
	}
	if p.rows == 0 {
		return nil, fmt.Errorf("no rows to serve: every row group is empty or filtered out")
	}
	bs, world := uint64(in.BatchSize), uint64(in.Ranks*in.Nodes)
	if in.DropLast {
		p.batches = uint64(p.rows) / bs / world * world
		if p.batches == 0 {
			return nil, fmt.Errorf("batch_size %d × %d ranks needs at least %d rows per epoch, the dataset has %d (after the filter): "+
				"lower batch_size or set drop_last: false", in.BatchSize, world, bs*world, p.rows)
		}
	} else {
		p.batches = (uint64(p.rows) + bs - 1) / bs
	}
	k, n := uint64(in.Node), uint64(in.Nodes)
	p.lo, p.hi = k*p.batches/n, (k+1)*p.batches/n
	return p, nil
}

// Rows is the number of kept rows per epoch; RowGroups the row groups holding them.
func (p *Plan) Rows() int64    { return p.rows }
func (p *Plan) RowGroups() int { return len(p.groups) }

// GlobalBatches is the number of global batches per epoch, over all nodes.
func (p *Plan) GlobalBatches() uint64 { return p.batches }

// DroppedRows is the number of kept rows per epoch that no batch serves (drop_last).
func (p *Plan) DroppedRows() int64 {
	if !p.in.DropLast {
		return 0
	}
	return p.rows - int64(p.batches)*int64(p.in.BatchSize)
}

// NodeBatches is the range of global batches this node serves each epoch.
func (p *Plan) NodeBatches() (lo, hi uint64) { return p.lo, p.hi }

// Steps is the number of batches local rank r gets per epoch.
func (p *Plan) Steps(rank int) uint64 {
	n, r, R := p.hi-p.lo, uint64(rank), uint64(p.in.Ranks)
	if r >= n {
		return 0
	}
	return (n-r-1)/R + 1
}

// Global is the global batch index of local rank's step.
func (p *Plan) Global(rank int, step uint64) uint64 {
	return p.lo + step*uint64(p.in.Ranks) + uint64(rank)
}

// BatchRows is the number of rows of global batch g (short only for the last one
// without drop_last).
func (p *Plan) BatchRows(g uint64) int {
	bs := uint64(p.in.BatchSize)
	if end := (g + 1) * bs; end > uint64(p.rows) {
		return int(uint64(p.rows) - g*bs)
	}
	return p.in.BatchSize
}

// Epoch returns the plan of epoch e.
func (p *Plan) Epoch(e uint64) *Epoch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ep := p.epochs[e]; ep != nil {
		return ep
	}
	if len(p.epochs) >= 4 { // ranks are rarely more than an epoch apart
		for k := range p.epochs {
			delete(p.epochs, k)
		}
	}
	ep := p.build(e)
	p.epochs[e] = ep
	return ep
}

func (p *Plan) build(e uint64) *Epoch {
	order := append([]int(nil), p.groups...)
	if p.in.ShuffleRowGroups {
		perm := Perm(len(order), seedOf(p.in.Seed, 1, e))
		for i, j := range perm {
			order[i] = p.groups[j]
		}
	}
	w := max(p.in.Window, 1)
	ep := &Epoch{Number: e}
	var start int64
	for i := 0; i < len(order); i += w {
		win := Window{Epoch: e, Index: len(ep.Windows), RowGroups: order[i:min(i+w, len(order))], Start: start}
		for _, g := range win.RowGroups {
			win.Rows += p.in.Rows[g]
		}
		if p.in.Window > 0 {
			win.Seed = seedOf(p.in.Seed, 2, e, uint64(win.Index))
			win.Shuffled = true
		}
		start += win.Rows
		ep.Windows = append(ep.Windows, win)
	}
	return ep
}

// Epoch is one epoch's windows, in serving order.
type Epoch struct {
	Number  uint64
	Windows []Window
}

// Window is a run of row groups whose kept rows are decoded together and mixed.
type Window struct {
	Epoch     uint64
	Index     int
	RowGroups []int // global row-group indices, in decode order
	Rows      int64 // kept rows
	Start     int64 // position of its first row in the epoch's stream
	Shuffled  bool  // rows are mixed by Perm(Rows, Seed)
	Seed      uint64
}

// Span is a run of a batch's rows taken from one window: positions [From, To) of the
// window's (permuted) order.
type Span struct {
	Window   int
	From, To int64
}

// Spans lists where global batch g's rows come from, in batch order.
func (p *Plan) Spans(ep *Epoch, g uint64) []Span {
	lo := int64(g) * int64(p.in.BatchSize)
	hi := lo + int64(p.BatchRows(g))
	i := sort.Search(len(ep.Windows), func(i int) bool { return ep.Windows[i].Start+ep.Windows[i].Rows > lo })
	var out []Span
	for ; i < len(ep.Windows) && ep.Windows[i].Start < hi; i++ {
		w := &ep.Windows[i]
		out = append(out, Span{Window: i, From: max(lo, w.Start) - w.Start, To: min(hi, w.Start+w.Rows) - w.Start})
	}
	return out
}

// NodeWindows is the range of window indices of epoch ep that this node's batches touch.
func (p *Plan) NodeWindows(ep *Epoch) (first, last int) {
	if p.hi == p.lo {
		return 0, -1
	}
	a, b := p.Spans(ep, p.lo), p.Spans(ep, p.hi-1)
	return a[0].Window, b[len(b)-1].Window
}
