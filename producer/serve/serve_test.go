package serve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shmloader/shmloader/consumer"
	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/dataset"
	"github.com/shmloader/shmloader/producer/gen"
	"github.com/shmloader/shmloader/producer/plan"
)

func TestMain(m *testing.M) {
	if role, cfg := testkit.Role(); role == takeOneRole {
		takeOneAndWait(cfg) // a trainer process for liveness_test.go
	}
	code := m.Run()
	if dataDir != "" {
		os.RemoveAll(filepath.Dir(dataDir))
	}
	os.Exit(code)
}

func tempDir() (string, error) { return os.MkdirTemp("", "shmloader-serve-test-") }

var (
	dataOnce sync.Once
	dataDir  string
	dataErr  error
)

// testData is one small synthetic dataset shared by the tests: 3 files of 20,000 rows,
// 1,000-row groups, with every column kind.
func testData(t testing.TB) string {
	dataOnce.Do(func() {
		dir, err := tempDir()
		if err != nil {
			dataErr = err
			return
		}
		dataDir = filepath.Join(dir, "data")
		dataErr = gen.Write(context.Background(), gen.Config{Out: dataDir, Rows: 20000, Files: 3, RowGroupRows: 1000,
			Compression: "snappy", Features: 8, Categoricals: 3, Strings: 2, ListMax: 6, NullFraction: 0.1, Seed: 11}, nil)
	})
	if dataErr != nil {
		t.Fatal(dataErr)
	}
	return dataDir
}

// testConfig serves every column kind through a transform.
func testConfig(t testing.TB) *config.Config {
	yaml := fmt.Sprintf(`
dataset: %s
batch_size: 256
seed: 3
epochs: 2
ranks: 2
ring_depth: 4
progress: 0s
shuffle: {row_groups: true, window: 3}
outputs:
  id: {columns: id}
  features:
    columns: [f000..f007]
    transforms: [{fill_null: 0}, {normalize: {mean: 0.5, std: 2}}, {clip: {min: -3, max: 3}}]
  cats: {columns: [c00..c02], transforms: [{hash_bucket: 1000}]}
  strs: {columns: [s00..s01], transforms: [{fill_null: ""}, {hash_bucket: 50}]}
  seq: {columns: seq, transforms: [{pad: {length: 4, value: -1}}]}
  label: {columns: label}
`, testData(t))
	cfg, err := config.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// stream is what one rank's consumer saw: a hash per batch and every id, by epoch.
type stream struct {
	hashes []string
	ids    map[uint64][]int64
}

// serveAndRead runs cfg and one consumer per rank; each consumer first seeks to
// seek[rank] if given.
func serveAndRead(t *testing.T, cfg *config.Config, opt Options, seek map[int][2]uint64) []stream {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	cfg.Job = fmt.Sprintf("t%d", time.Now().UnixNano()%1e9)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var served []Result
	var serveErr error
	done := make(chan struct{})
	go func() { served, serveErr = Run(ctx, cfg, opt); close(done) }()
	out := make([]stream, cfg.Ranks)
	var wg sync.WaitGroup
	errs := make([]error, cfg.Ranks)
	for r := range cfg.Ranks {
		wg.Go(func() { out[r], errs[r] = read(cfg.Job, r, opt.Dir, seek[r]) })
	}
	wg.Wait()
	<-done
	if err := errors.Join(append(errs, serveErr)...); err != nil {
		t.Fatal(err)
	}
	for r, res := range served {
		if n := len(out[r].hashes); int64(n) != res.Batches && seek == nil {
			t.Fatalf("rank %d: serve says %d batches, the consumer read %d", r, res.Batches, n)
		}
	}
	return out
}

func read(job string, rank int, dir string, seek [2]uint64) (stream, error) {
	s := stream{ids: map[uint64][]int64{}}
	c, err := consumer.Attach(job, rank, consumer.Options{Dir: dir, Timeout: 20 * time.Second})
	if err != nil {
		return s, err
	}
	defer c.Close()
	if seek != [2]uint64{} {
		if err := c.Seek(seek[0], seek[1]); err != nil {
			return s, err
		}
	}
	for {
		b, err := c.Next(20 * time.Second)
		switch {
		case errors.Is(err, consumer.ErrEndOfStream):
			return s, nil
		case errors.Is(err, consumer.ErrEndOfEpoch):
			continue
		case err != nil:
			return s, err
		}
		s.hashes = append(s.hashes, hashOf(b))
		id, _ := b.Tensor("id")
		s.ids[b.Epoch] = append(s.ids[b.Epoch], id.Int64s()...)
		if err := c.Release(b); err != nil {
			return s, err
		}
	}
}

// hashOf identifies a batch: its position and every tensor byte.
func hashOf(b *consumer.Batch) string {
	h := sha256.New()
	fmt.Fprint(h, b.Epoch, b.Step, b.Rows)
	for _, t := range b.Tensors {
		h.Write(t.Data)
	}
	return fmt.Sprintf("%d/%d:%x", b.Epoch, b.Step, h.Sum(nil)[:8])
}

// testPlan is the plan serve makes of cfg (no filter): the counts tests expect.
func testPlan(t testing.TB, cfg *config.Config) *plan.Plan {
	t.Helper()
	ds, err := dataset.Open(cfg.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int64, len(ds.RowGroups))
	for i, rg := range ds.RowGroups {
		rows[i] = rg.Rows
	}
	p, err := plan.New(plan.Input{Rows: rows, BatchSize: cfg.BatchSize, Seed: cfg.Seed, ShuffleRowGroups: cfg.Shuffle.RowGroups,
		Window: cfg.Shuffle.Window, DropLast: cfg.DropLast, Partitions: cfg.Partitions, Ranks: cfg.Ranks, Nodes: cfg.Node.Count})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
