package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/plan"
	"github.com/shmloader/shmloader/producer/storage"
	"github.com/shmloader/shmloader/ring"
)

// Options are the run's settings beyond the config.
type Options struct {
	Dir                   string // segment directory ("" = $SHMLOADER_SHM_DIR or /dev/shm)
	StartEpoch, StartStep uint64 // where every rank starts
	// StartBase is the global batch the start epoch began at, and SavedWorld the
	// trainers of the layout StartStep counts in (0: this one). A state saved under
	// another world size is translated to this layout (plan.Resume).
	StartBase, SavedWorld uint64
	ExpectHash            uint64 // if nonzero, the config hash a resumed state was saved with
	DrainTimeout          time.Duration
	// Logger gets the start-up summary, status lines and warnings; nil: Log, through
	// NewHumanHandler, or nothing when Log is nil too.
	Logger *slog.Logger
	Log    io.Writer
	// Started, if set, is called once the rings exist (trainers may attach), with what
	// observers read while the job runs; the run does not wait for it.
	Started func(*Live)
	// Store is where the dataset's files are listed and read; nil: the store of the
	// config's dataset path (storage.For: local files).
	Store storage.Store
}

// Result is what one rank published.
type Result struct {
	Rank          int
	Batches, Rows int64
	Epoch, Step   uint64
}

func (r Result) String() string {
	return fmt.Sprintf("rank=%d batches=%d rows=%d", r.Rank, r.Batches, r.Rows)
}

type server struct {
	cfg       *config.Config
	opt       Options
	log       *slog.Logger
	started   time.Time
	src       *source
	plan      *plan.Plan
	queue     *queue
	blocks    *blockSource
	store     *store
	cacheNeed int64 // bytes this node's row groups take in the cache
	windows   *windows
	stats     stats

	orderMu sync.Mutex
	orders  map[uint64]*nodeOrder // per epoch, a few recent ones

	at    []atomic.Uint64 // per rank: position of the batch it fills, or done (rank loop writes)
	prods []*ring.Producer
	// trainer[r]: a consumer holds rank r's consumer lock (the kernel's word, refreshed
	// every 20 ms by watchTrainers): a trainer that died or left without detaching no
	// longer counts, whatever pid its ring header still names.
	trainer []atomic.Bool
	// hadTrainer[r]: a trainer has held rank r's consumer lock since serve started, so
	// --drain-timeout applies to the rank once none does.
	hadTrainer []atomic.Bool
	waits      []rankWait // per rank: what its loop waits for now (stall notes)
	ringsAt    time.Time  // when the rings appeared (trainers may attach from then)
	workers    workerStates
	notes      notes // per rank: the stall note last published
}

// Run serves cfg until every rank has published its epochs and its consumer has read
// them, or until ctx is cancelled (the rings are then marked stopped). The segments are
// removed before it returns.
func Run(ctx context.Context, cfg *config.Config, opt Options) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, opt: opt, log: opt.logger(), started: time.Now(), queue: newQueue(), orders: map[uint64]*nodeOrder{}}
	ds, err := openDataset(ctx, cfg, opt.Store)
	if err != nil {
		return nil, err
	}
	if s.src, err = newSource(ds, cfg); err != nil {
		return nil, err
	}
	hash := configHash(cfg, ds)
	if opt.ExpectHash != 0 && opt.ExpectHash != hash {
		return nil, fmt.Errorf("the saved state is for config %#x, this config and dataset give %#x: "+
			"resuming would not reproduce the same batches", opt.ExpectHash, hash)
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rows, err := s.keptRows(ctx, workers)
	if err != nil {
		return nil, err
	}
	s.plan, err = plan.New(plan.Input{Rows: rows, BatchSize: cfg.BatchSize, Seed: cfg.Seed,
		ShuffleRowGroups: cfg.Shuffle.RowGroups, Window: cfg.Shuffle.Window, DropLast: cfg.DropLast,
		Partitions: cfg.Partitions, Ranks: cfg.Ranks, Node: cfg.Node.Rank, Nodes: cfg.Node.Count})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Dataset, err)
	}
	if opt.SavedWorld != 0 {
		if s.opt.StartBase, s.opt.StartStep, err = s.plan.Resume(opt.SavedWorld, opt.StartBase, opt.StartStep); err != nil {
			return nil, err
		}
	}
	if last := cfg.Ranks - 1; s.plan.Steps(last) == 0 {
		return nil, fmt.Errorf("%s: rank %d of node %d gets no batches: %d global batches per epoch for %d ranks on %d nodes; "+
			"lower batch_size or the number of ranks", cfg.Dataset, last, cfg.Node.Rank, s.plan.GlobalBatches(), cfg.Ranks, cfg.Node.Count)
	}
	if cfg.Epochs != 0 && opt.StartEpoch >= cfg.Epochs {
		return nil, fmt.Errorf("start at epoch %d: the job has epochs 0..%d", opt.StartEpoch, cfg.Epochs-1)
	}
	// A step equal to the epoch's steps is its end (a state saved after its last batch):
	// every rank then starts the next epoch, as the C library's shml_resume has it.
	if n := s.plan.StepsFrom(0, s.opt.StartBase); s.opt.StartStep > n {
		return nil, fmt.Errorf("start at step %d: an epoch has steps 0..%d per rank (%d: at its end)", s.opt.StartStep, int64(n)-1, n)
	}
	// One window per partition of this node is being read at a time (two while a batch
	// spans a window's end), and prefetch more are decoded ahead.
	parts := len(s.plan.NodePartitions())
	s.blocks = newBlockSource(newRowLayout(s.src.rowSize), rows)
	s.at = make([]atomic.Uint64, cfg.Ranks)
	s.windows = newWindows(s.queue, s.blocks, parts+cfg.Prefetch+2, s.place, s.floor)
	s.openStore()
	if s.store.cache != nil {
		defer s.store.cache.Close()
	}
	s.stats.ranks = make([]rankStats, cfg.Ranks)

	specs := make([]ring.Spec, cfg.Ranks)
	for r := range specs {
		specs[r] = ring.Spec{Job: cfg.Job, Rank: r, Ranks: cfg.Ranks, SlotCount: cfg.RingDepth,
			BatchCapacity: s.plan.MaxBatchRows(), Tensors: s.src.tensors, ConfigHash: hash,
			Nodes: cfg.Node.Count, NodeRank: cfg.Node.Rank, ElasticLimit: s.plan.ElasticLimit(),
			StepsPerEpoch: s.plan.Steps(r), Epochs: cfg.Epochs, GlobalBatches: s.plan.GlobalBatches(),
			PlanVersion: plan.Version}
	}
	job, prods, err := ring.CreateRings(opt.Dir, specs)
	if err != nil {
		return nil, err
	}
	s.prods = prods
	defer job.Close()
	live := s.live(job.Dir, hash, workers)
	defer live.close() // before the rings are unmapped: observers keep its last figures
	s.trainer = make([]atomic.Bool, cfg.Ranks)
	s.hadTrainer = make([]atomic.Bool, cfg.Ranks)
	attached := make([]func() (bool, error), cfg.Ranks)
	for r := range attached {
		attached[r] = job.Segments[r].ConsumerAttached
	}
	s.waits = make([]rankWait, cfg.Ranks)
	s.ringsAt = time.Now()
	s.watchTrainers(attached) // once now, then every 20 ms until done
	s.summary(job.Dir, hash, workers, prods[0].Geometry())

	// The run's end before its last epoch has a cause (Ended, or the error): the rings
	// say it to every trainer.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wwg sync.WaitGroup
	for range workers {
		wwg.Go(func() { s.worker(runCtx) })
	}
	done := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Go(func() { s.reporter(prods, cfg.Progress, done) })
	rwg.Go(func() { s.watchTrainersUntil(attached, done, cancel) })
	rwg.Go(func() { s.explainUntil(done) })
	if opt.Started != nil {
		opt.Started(live)
	}
	errs := make([]error, cfg.Ranks)
	var ranks sync.WaitGroup
	for r := range prods {
		ranks.Go(func() {
			errs[r] = s.serveRank(runCtx, r, prods[r], job.Segments[r].ConsumerAttached)
			if errs[r] != nil { // stopped, or failed: every rank stops, for this cause
				cancel(errs[r])
				s.windows.wake()
			}
		})
	}
	ranks.Wait()
	if end := stopReason(runCtx); end != nil {
		for _, p := range prods {
			p.Stop(end.Kind, end.Reason) // a rank that finished keeps its end of stream
		}
	}
	close(done)
	rwg.Wait()
	s.queue.stop()
	wwg.Wait()
	s.windows.close()
	if c := s.store.cache; c != nil {
		s.store.mapped.close()
		st := c.Stats()
		s.logf("cache: %d hits, %d misses, %s served from it, %d written, %d evicted, %d not admitted, %d corrupt dropped",
			st.Hits, st.Misses, units.Bytes(uint64(st.HitBytes)), s.stats.written.Load(), st.Evictions, st.Refused, st.Corrupt)
	}

	results := make([]Result, cfg.Ranks)
	for r := range results {
		st := s.stats.rank(r)
		results[r] = Result{Rank: r, Batches: st.batches.Load(), Rows: st.rows.Load(), Epoch: st.epoch.Load(), Step: st.step.Load()}
	}
	if ctx.Err() != nil { // the caller stopped the run
		var e *Ended
		if errors.As(context.Cause(ctx), &e) {
			return results, e
		}
		return results, ctx.Err()
	}
	return results, context.Cause(runCtx) // nil when every rank finished
}
