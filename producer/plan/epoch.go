package plan

import "sort"

// Epoch is one epoch's windows, per partition, in serving order.
type Epoch struct {
	Number uint64
	Parts  [][]Window // Parts[p]: partition p's windows
}

// Window is a run of one partition's row groups whose kept rows are decoded together
// and mixed.
type Window struct {
	Epoch     uint64
	Part      int
	Index     int   // within the partition's epoch
	RowGroups []int // global row-group indices, in decode order
	Rows      int64 // kept rows
	Start     int64 // position of its first row in the partition's stream
	Shuffled  bool  // rows are mixed by Perm(Rows, Seed)
	Seed      uint64
}

// Span is a run of a batch's rows taken from one window: positions [From, To) of the
// window's (permuted) order.
type Span struct {
	Part, Window int
	From, To     int64
}

// WindowRef names a window of an epoch, with the first and last global batches that
// read it and the number of batches that do.
type WindowRef struct {
	Part, Index int
	First, Last uint64
	Batches     int
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
	ep := &Epoch{Number: e, Parts: make([][]Window, len(p.parts))}
	for _, i := range p.mine {
		ep.Parts[i] = p.windows(e, i)
	}
	p.epochs[e] = ep
	return ep
}

// windows cuts partition i's row groups, permuted for epoch e, into windows. The first
// window of partition i holds i mod W row groups (W when that is 0), so that the
// partitions' windows end at different batches and the producer decodes them evenly
// rather than all at once.
func (p *Plan) windows(e uint64, i int) []Window {
	order := append([]int(nil), p.parts[i]...)
	if p.in.ShuffleRowGroups {
		for k, j := range Perm(len(order), seedOf(p.in.Seed, 1, e, uint64(i))) {
			order[k] = p.parts[i][j]
		}
	}
	w := max(p.in.Window, 1)
	size := i % w
	if size == 0 {
		size = w
	}
	var out []Window
	var start int64
	for k := 0; k < len(order); k += size {
		if k > 0 {
			size = w
		}
		win := Window{Epoch: e, Part: i, Index: len(out), RowGroups: order[k:min(k+size, len(order))], Start: start}
		for _, g := range win.RowGroups {
			win.Rows += p.in.Rows[g]
		}
		if p.in.Window > 0 {
			win.Seed = seedOf(p.in.Seed, 2, e, uint64(i), uint64(win.Index))
			win.Shuffled = true
		}
		start += win.Rows
		out = append(out, win)
	}
	return out
}

// NodeOrder lists the windows of ep that this node reads in an epoch started at base,
// in the order of their first use: the order to decode and prefetch them in.
func (p *Plan) NodeOrder(ep *Epoch, base uint64) []WindowRef {
	bs := int64(p.in.BatchSize)
	var out []WindowRef
	for _, i := range p.mine {
		lo, hi := p.served(i, base)
		for _, w := range ep.Parts[i] {
			first := max(w.Start/bs, lo)
			last := min((w.Start+w.Rows-1)/bs, hi-1)
			if first <= last {
				out = append(out, WindowRef{Part: i, Index: w.Index, First: p.globalOf(i, first), Last: p.globalOf(i, last),
					Batches: int(last - first + 1)})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		return x.First < y.First || x.First == y.First && (x.Part < y.Part || x.Part == y.Part && x.Index < y.Index)
	})
	return out
}
