package serve

import (
	"os"
	"sync"
	"time"
)

// Live is a running job as observers see it: `shmloader status` (through the status
// file serve writes) and the metrics endpoint. Snapshot may be called from any
// goroutine while the job runs.
type Live struct {
	s          *server
	dir        string
	configHash uint64
	workers    int

	mu     sync.RWMutex
	closed bool     // the run ended: the rings are (about to be) unmapped
	last   Snapshot // taken at close; what Snapshot returns from then on
}

// close takes the last snapshot; from then on Snapshot returns it without reading the
// rings, which the run unmaps next.
func (l *Live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = l.read()
	l.closed = true
}

func (s *server) live(dir string, hash uint64, workers int) *Live {
	return &Live{s: s, dir: dir, configHash: hash, workers: workers}
}

// Snapshot is the job's figures at one moment. Counters only grow while the job runs;
// observers take rates from two snapshots.
type Snapshot struct {
	Time       time.Time `json:"time"`
	Job        string    `json:"job"`
	Dir        string    `json:"dir"`
	PID        int       `json:"pid"`
	Started    time.Time `json:"started"`
	ConfigHash uint64    `json:"config_hash"`
	Workers    int       `json:"workers"`
	Nodes      int       `json:"nodes"`
	NodeRank   int       `json:"node_rank"`
	Epochs     uint64    `json:"epochs"` // 0: endless
	BatchSize  int       `json:"batch_size"`

	DecodedRows      int64   `json:"decoded_rows"`       // rows decoded from Parquet (cache misses)
	CachedRows       int64   `json:"cached_rows"`        // rows read from the cache
	DecodeCPUSeconds float64 `json:"decode_cpu_seconds"` // CPU time decode workers spent decoding

	Cache *CacheSnapshot `json:"cache"` // nil without a cache
	Rings []RingSnapshot `json:"rings"`
}

// CacheSnapshot is the cache's side of a Snapshot.
type CacheSnapshot struct {
	Dir           string `json:"dir"`
	Hits          int64  `json:"hits"`
	Misses        int64  `json:"misses"`
	HitBytes      int64  `json:"hit_bytes"`
	Written       int64  `json:"written"`
	Evictions     int64  `json:"evictions"`
	Refused       int64  `json:"refused"`
	Corrupt       int64  `json:"corrupt"`
	ResidentBytes int64  `json:"resident_bytes"`
	Entries       int64  `json:"entries"`
	BudgetBytes   int64  `json:"budget_bytes"`
	NodeBytes     int64  `json:"node_bytes"` // what this node's row groups take in it
}

// RingSnapshot is one rank's ring: what serve published and, from the ring header's
// observer counters, what its trainers took and waited for (ring/PROTOCOL.md).
type RingSnapshot struct {
	Rank          int     `json:"rank"`
	Slots         int     `json:"slots"`
	Occupancy     uint64  `json:"occupancy"`
	ConsumerPID   uint32  `json:"consumer_pid"` // 0: no trainer attached
	Done          bool    `json:"done"`         // every batch served and read
	StepsPerEpoch uint64  `json:"steps_per_epoch"`
	Batches       int64   `json:"batches"`         // published
	RowsOut       uint64  `json:"rows_out"`        // published
	RowsIn        uint64  `json:"rows_in"`         // taken by trainers
	Bytes         int64   `json:"bytes"`           // published
	PubEpoch      uint64  `json:"pub_epoch"`       // position after the last batch published
	PubStep       uint64  `json:"pub_step"`        //
	Epoch         uint64  `json:"epoch"`           // position after the last batch a trainer took
	Step          uint64  `json:"step"`            //
	ProducerWaitS float64 `json:"producer_wait_s"` // serve waited for a free slot (trainer slower)
	ConsumerWaitS float64 `json:"consumer_wait_s"` // trainers waited for a batch (data stall)
	// Waits says why the rank has had no batch for a while ("rank 0 waits: rank 1 has had
	// no trainer for 42 s (...)"), as its trainer is told; "" when it is not held back.
	Waits string `json:"waits,omitempty"`
}

// Snapshot reads the job's figures now (after the run ended, its last figures).
func (l *Live) Snapshot() Snapshot {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return l.last
	}
	return l.read()
}

func (l *Live) read() Snapshot {
	s := l.s
	c := s.cfg
	snap := Snapshot{
		Time: time.Now(), Job: c.Job, Dir: l.dir, PID: os.Getpid(), Started: s.started,
		ConfigHash: l.configHash, Workers: l.workers, Nodes: c.Node.Count, NodeRank: c.Node.Rank,
		Epochs: c.Epochs, BatchSize: c.BatchSize,
		DecodedRows: s.stats.decodedRows.Load(), CachedRows: s.stats.cachedRows.Load(),
		DecodeCPUSeconds: time.Duration(s.stats.decodeCPUNs.Load()).Seconds(),
	}
	if cc := s.store.cache; cc != nil {
		st := cc.Stats()
		snap.Cache = &CacheSnapshot{Dir: c.Cache.Dir, Hits: st.Hits, Misses: st.Misses, HitBytes: st.HitBytes,
			Written: s.stats.written.Load(), Evictions: st.Evictions, Refused: st.Refused, Corrupt: st.Corrupt,
			ResidentBytes: st.ResidentBytes, Entries: st.Entries, BudgetBytes: s.store.budget, NodeBytes: s.cacheNeed}
	}
	for r, p := range s.prods {
		st := s.stats.rank(r)
		k := p.Counters()
		if !s.trainer[r].Load() {
			k.ConsumerPID = 0 // the header's pid outlives a trainer that did not detach
		}
		snap.Rings = append(snap.Rings, RingSnapshot{
			Rank: r, Slots: int(p.Geometry().SlotCount), Occupancy: k.Occupancy, ConsumerPID: k.ConsumerPID,
			Done: st.done.Load(), StepsPerEpoch: s.plan.Steps(r), Batches: st.batches.Load(),
			RowsOut: k.RowsOut, RowsIn: k.RowsIn, Bytes: st.bytes.Load(),
			PubEpoch: k.PubEpoch, PubStep: k.PubStep, Epoch: k.ConsEpoch, Step: k.ConsStep,
			ProducerWaitS: k.ProducerWait.Seconds(), ConsumerWaitS: k.ConsumerWait.Seconds(),
			Waits: s.notes.get(r),
		})
	}
	return snap
}
