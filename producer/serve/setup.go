package serve

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/colsrc"
	"github.com/shmloader/shmloader/producer/plan"
	"github.com/shmloader/shmloader/ring"
)

// keptRows returns the rows of every row group that pass the filter: row groups are
// skipped by their footer statistics, and the others' filter columns are read once, so
// that the plan of every epoch is known before serving starts (and a seek costs only
// arithmetic).
func (s *server) keptRows(ctx context.Context, workers int) ([]int64, error) {
	rgs := s.src.ds.RowGroups
	rows := make([]int64, len(rgs))
	var scan []int
	for i, rg := range rgs {
		ok, err := s.src.mayMatch(rg)
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
		case s.src.filtering():
			scan = append(scan, i)
		default:
			rows[i] = rg.Rows
		}
	}
	if !s.src.filtering() {
		return rows, nil
	}
	s.logf("filter: %d of %d row groups skipped by their statistics; reading the filter's columns of the other %d",
		len(rgs)-len(scan), len(rgs), len(scan))
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			readers, arrays := newReaders(s.src.ds), colsrc.NewArrays(s.src.ds)
			defer readers.close()
			for errs[w] == nil && ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(scan) {
					return
				}
				rg := rgs[scan[i]]
				r, err := readers.get(rg.File)
				if errs[w] = err; err != nil {
					return
				}
				rows[scan[i]], errs[w] = s.src.countKept(ctx, arrays, r, rg)
				if w == 0 && time.Since(start) > 5*time.Second {
					s.logf("filter: %d/%d row groups read", min(int(next.Load()), len(scan)), len(scan))
					start = time.Now()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// summary prints what is about to be served.
func (s *server) summary(dir string, hash uint64, workers int, g *ring.Geometry) {
	ds, p, c := s.src.ds, s.plan, s.cfg
	s.logf("dataset %s: %d files, %d row groups, %d rows", c.Dataset, len(ds.Files), len(ds.RowGroups), ds.Rows)
	if s.src.filtering() {
		s.logf("filter keeps %d rows in %d row groups", p.Rows(), p.RowGroups())
	}
	dropped := "each partition's last batch may be short (drop_last: false)"
	if c.DropLast {
		dropped = fmt.Sprintf("%d rows dropped (drop_last)", p.DroppedRows())
	}
	s.logf("plan v%d: %d partitions; node %d/%d serves partitions %s: %d rows, in every epoch",
		plan.Version, p.Partitions(), c.Node.Rank, c.Node.Count, listText(p.NodePartitions()), p.NodeRows())
	lo, hi := p.Steps(c.Ranks-1), p.Steps(0)
	steps := fmt.Sprintf("%d steps per rank", hi)
	if lo != hi {
		steps = fmt.Sprintf("%d to %d steps per rank", lo, hi)
	}
	s.log.Info(fmt.Sprintf("epoch: %d global batches of %d rows over %d trainers; %s; %s",
		p.GlobalBatches(), c.BatchSize, p.World(), steps, dropped),
		"global_batches", p.GlobalBatches(), "batch_size", c.BatchSize, "world", p.World(),
		"steps_per_rank", hi, "dropped_rows", p.DroppedRows())
	if lo != hi || c.Node.Count > 1 && !c.DropLast {
		s.logf("warning: with drop_last: false ranks (and nodes) may get different batch counts per epoch; " +
			"a collective training step (all-reduce) then waits forever for the rank that has none: drop_last: true gives every rank the same count")
	}
	s.logf("%s", s.cacheSummary())
	if most := int(g.BatchCapacity); most < c.BatchSize {
		s.logf("batch_size %d: no batch of this node holds more than %d rows (drop_last: false, and a partition's rows end "+
			"its batches), so neither do the slots", c.BatchSize, most)
	}
	for _, t := range s.src.tensors {
		s.logf("tensor %-12s %-8s %v", t.Name, t.DType, append([]int{int(g.BatchCapacity)}, t.Shape...))
	}
	epochs := fmt.Sprint(c.Epochs)
	if c.Epochs == 0 {
		epochs = "endless"
	}
	s.log.Info(fmt.Sprintf("job %q: %d rings × %d slots × %s in %s, config 0x%016x, %d workers, epochs %s, seed %d",
		c.Job, c.Ranks, c.RingDepth, units.Bytes(g.SlotSize), dir, hash, workers, epochs, c.Seed),
		"job", c.Job, "ranks", c.Ranks, "slots", c.RingDepth, "slot_bytes", g.SlotSize, "dir", dir,
		"config_hash", fmt.Sprintf("0x%016x", hash), "workers", workers, "epochs", c.Epochs, "seed", c.Seed)
	s.memorySummary(g)
	switch o := s.opt; {
	case o.StartBase != 0:
		s.logf("starting every rank at epoch %d, global batch %d (a state saved under %d trainers; %d here)",
			o.StartEpoch, o.StartBase, o.SavedWorld, p.World())
	case o.StartEpoch != 0 || o.StartStep != 0:
		s.logf("starting every rank at epoch %d step %d", o.StartEpoch, o.StartStep)
	}
}

// memorySummary logs what serve's memory is made of, whatever the dataset's size: the
// rings, and at most windows.capacity windows of decoded rows, each of at most
// shuffle.window row groups in buffers sized for the largest row group, with an 8-byte
// serving order per row when shuffled. Beyond those, the Go runtime, the files' footers
// and the plan (which grow with the number of row groups, not rows) and each worker's
// column chunk buffers. With the cache on, the rows are pages of the cache's files
// instead of anonymous memory.
func (s *server) memorySummary(g *ring.Geometry) {
	rings := uint64(s.cfg.Ranks) * g.TotalSize
	rgs := int64(max(1, s.cfg.Shuffle.Window))
	perRow := int64(s.blocks.layout.stride)
	if s.cfg.Shuffle.Window > 0 {
		perRow += 8 // a loc per row
	}
	window := uint64(rgs * s.blocks.maxRows * perRow)
	where := "anonymous memory"
	if s.store.cache != nil {
		where = "pages of the cache's files"
	}
	n := uint64(s.windows.capacity)
	s.log.Info(fmt.Sprintf("memory: rings %s + at most %d windows of %d row groups × %d rows × %d B = %s of decoded rows (%s)",
		units.Bytes(rings), n, rgs, s.blocks.maxRows, perRow, units.Bytes(n*window), where),
		"ring_bytes", rings, "windows", n, "window_bytes", window, "window_rows_in", where)
}

// listText writes a list of partitions briefly: "0-7" or "1, 3, 5".
func listText(xs []int) string {
	if n := len(xs); n > 2 && xs[n-1]-xs[0] == n-1 {
		return fmt.Sprintf("%d-%d", xs[0], xs[n-1])
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
