// Command cachesim compares cache eviction by the plan's future (Belady's rule, what the
// cache does with an Oracle) against LRU (without one) on the row groups one node reads
// over several epochs, at cache sizes given as shares of the node's data. It replays the
// trace through cache.Simulate: one entry per row group of kept rows × row-bytes bytes.
// The defaults are the bench job (bench/peers: 2,000,000 rows split by `shmloader gen`
// as bench/peers/run.py calls it, batches of 1024, windows of 4 row groups, drop_last
// off, 2 ranks) over 6 epochs.
//
//	go run ./bench/cachesim -json bench/results/cachesim.json
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/shmloader/shmloader/cache"
	"github.com/shmloader/shmloader/internal/units"
	"github.com/shmloader/shmloader/producer/plan"
)

// Config is what a run simulates; the JSON output carries it.
type Config struct {
	Rows         int64   `json:"rows"`
	Files        int     `json:"files"`
	Groups       int     `json:"row_groups"`
	RowsPerGroup int64   `json:"rows_per_group"`
	BatchSize    int     `json:"batch_size"`
	Partitions   int     `json:"partitions"` // in force (0 on the command line: automatic)
	Window       int     `json:"window"`
	DropLast     bool    `json:"drop_last"`
	Epochs       int     `json:"epochs"`
	Node         int     `json:"node"`
	Nodes        int     `json:"nodes"`
	Ranks        int     `json:"ranks"`
	Seed         uint64  `json:"seed"`
	RowBytes     int64   `json:"row_bytes"`
	Capacities   []int64 `json:"capacity_pcts"`
}

// Result is one capacity's outcome.
type Result struct {
	CapacityPct   int64    `json:"capacity_pct"`
	CapacityBytes int64    `json:"capacity_bytes"`
	Belady        Counts   `json:"belady"`
	LRU           Counts   `json:"lru"`
	Ratio         *float64 `json:"ratio"` // Belady's hit rate over LRU's; null when LRU never hits
}

// Counts is cache.SimResult with its hit rate.
type Counts struct {
	HitRate   float64 `json:"hit_rate"`
	Hits      int64   `json:"hits"`
	Misses    int64   `json:"misses"`
	HitBytes  int64   `json:"hit_bytes"`
	MissBytes int64   `json:"miss_bytes"`
	Evictions int64   `json:"evictions"`
	Refused   int64   `json:"refused"` // misses not admitted
}

func counts(r cache.SimResult) Counts {
	return Counts{HitRate: r.HitRate(), Hits: r.Hits, Misses: r.Misses, HitBytes: r.HitBytes, MissBytes: r.MissBytes,
		Evictions: r.Evictions, Refused: r.Refused}
}

// Report is the JSON output.
type Report struct {
	Config     Config   `json:"config"`
	NodeGroups int      `json:"node_row_groups"`
	NodeBytes  int64    `json:"node_bytes"`
	Reads      int      `json:"reads"`
	Ceiling    float64  `json:"ceiling"` // best possible hit rate: all but each row group's first read
	Results    []Result `json:"results"`
}

func main() {
	var c Config
	flag.Int64Var(&c.Rows, "rows", 2_000_000, "rows of the dataset, split into files and row groups as `shmloader gen` does")
	flag.IntVar(&c.Files, "files", 0, "files of the dataset (0: as bench/peers/run.py, one per 125,000 rows)")
	flag.IntVar(&c.Groups, "groups", 0, "row groups of exactly -rows-per-group rows each, instead of -rows and -files (0: split -rows)")
	flag.Int64Var(&c.RowsPerGroup, "rows-per-group", 16384, "rows per row group (the last of a file may be smaller)")
	flag.IntVar(&c.BatchSize, "batch", 1024, "batch size")
	flag.IntVar(&c.Partitions, "partitions", 0, "canonical partitions (0: plan.AutoPartitions)")
	flag.IntVar(&c.Window, "window", 4, "shuffle window in row groups")
	flag.BoolVar(&c.DropLast, "drop-last", false, "drop_last")
	flag.IntVar(&c.Epochs, "epochs", 6, "epochs simulated, from epoch 0")
	flag.IntVar(&c.Nodes, "nodes", 1, "nodes")
	flag.IntVar(&c.Node, "node", 0, "the node whose reads are simulated")
	flag.IntVar(&c.Ranks, "ranks", 2, "ranks per node")
	flag.Uint64Var(&c.Seed, "seed", 1, "plan seed")
	flag.Int64Var(&c.RowBytes, "row-bytes", 652, "bytes of a decoded row (the bench job: 100 float32 features, 30 hashed int64 categoricals, a float32 label, an int64 id)")
	caps := flag.String("capacities", "25,50,75", "cache sizes, in percent of the node's bytes, comma-separated")
	jsonPath := flag.String("json", "", "also write the results as JSON to this path")
	flag.Parse()
	if err := run(c, *caps, *jsonPath); err != nil {
		fmt.Fprintln(os.Stderr, "cachesim:", err)
		os.Exit(1)
	}
}

func run(c Config, caps, jsonPath string) error {
	for _, s := range strings.Split(caps, ",") {
		pct, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || pct <= 0 || pct > 100 {
			return fmt.Errorf("capacity %q: want a percentage in (0, 100]", s)
		}
		c.Capacities = append(c.Capacities, pct)
	}
	if c.Epochs < 1 || c.RowBytes < 1 {
		return fmt.Errorf("epochs %d, row-bytes %d: want both >= 1", c.Epochs, c.RowBytes)
	}
	rows, err := groupRows(&c)
	if err != nil {
		return err
	}
	p, err := plan.New(plan.Input{Rows: rows, BatchSize: c.BatchSize, Seed: c.Seed, ShuffleRowGroups: true,
		Window: c.Window, DropLast: c.DropLast, Partitions: c.Partitions, Ranks: c.Ranks, Node: c.Node, Nodes: c.Nodes})
	if err != nil {
		return err
	}
	c.Partitions = p.Partitions()
	tr := trace(p, c.Epochs)
	distinct := map[cache.Key]bool{}
	for _, k := range tr {
		distinct[k] = true
	}
	size := func(k cache.Key) int64 { return rows[binary.LittleEndian.Uint64(k[:8])] * c.RowBytes }
	rep := Report{Config: c, NodeGroups: len(distinct), NodeBytes: p.NodeRows() * c.RowBytes, Reads: len(tr)}
	if len(tr) > 0 {
		rep.Ceiling = 1 - float64(len(distinct))/float64(len(tr))
	}
	for _, pct := range c.Capacities {
		r := Result{CapacityPct: pct, CapacityBytes: rep.NodeBytes * pct / 100}
		r.Belady = counts(cache.Simulate(tr, size, r.CapacityBytes, "belady"))
		r.LRU = counts(cache.Simulate(tr, size, r.CapacityBytes, "lru"))
		if r.LRU.HitRate > 0 {
			ratio := r.Belady.HitRate / r.LRU.HitRate
			r.Ratio = &ratio
		}
		rep.Results = append(rep.Results, r)
	}
	printTable(rep)
	if jsonPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(jsonPath, append(b, '\n'), 0o644)
}

// groupRows lists the rows of every row group: -groups equal ones, or -rows split into
// -files files as gen.fileRows does (the first files one row longer), each cut into row
// groups of -rows-per-group (the last of a file shorter).
func groupRows(c *Config) ([]int64, error) {
	if c.RowsPerGroup < 1 {
		return nil, fmt.Errorf("rows-per-group %d: want >= 1", c.RowsPerGroup)
	}
	if c.Groups > 0 {
		c.Rows, c.Files = int64(c.Groups)*c.RowsPerGroup, 0
		rows := make([]int64, c.Groups)
		for i := range rows {
			rows[i] = c.RowsPerGroup
		}
		return rows, nil
	}
	if c.Files == 0 {
		c.Files = max(1, int(math.Round(float64(c.Rows)/125_000)))
	}
	if c.Rows < 1 || c.Files < 1 || int64(c.Files) > c.Rows {
		return nil, fmt.Errorf("rows %d in %d files: want 1 <= files <= rows", c.Rows, c.Files)
	}
	per, extra := c.Rows/int64(c.Files), c.Rows%int64(c.Files)
	var rows []int64
	for i := range int64(c.Files) {
		n := per
		if i < extra {
			n++
		}
		for ; n > 0; n -= c.RowsPerGroup {
			rows = append(rows, min(n, c.RowsPerGroup))
		}
	}
	c.Groups = len(rows)
	return rows, nil
}

// trace is the row groups the plan's node reads over epochs [0, epochs): each epoch's
// windows in the order of first use, each window's row groups in decode order. A key
// holds the row group's global index.
func trace(p *plan.Plan, epochs int) []cache.Key {
	var tr []cache.Key
	for e := range uint64(epochs) {
		ep := p.Epoch(e)
		for _, w := range p.NodeOrder(ep, 0) {
			for _, g := range ep.Parts[w.Part][w.Index].RowGroups {
				var k cache.Key
				binary.LittleEndian.PutUint64(k[:8], uint64(g))
				tr = append(tr, k)
			}
		}
	}
	return tr
}

func printTable(r Report) {
	c := r.Config
	fmt.Printf("%d rows in %d row groups (%d files), batch %d, %d partitions, window %d, drop_last %v, node %d of %d, %d epochs, seed %d\n",
		c.Rows, c.Groups, c.Files, c.BatchSize, c.Partitions, c.Window, c.DropLast, c.Node, c.Nodes, c.Epochs, c.Seed)
	fmt.Printf("node: %d row groups, %s at %d B a row; %d reads; best possible hit rate %.3f (every first read misses)\n\n",
		r.NodeGroups, units.Bytes(r.NodeBytes), c.RowBytes, r.Reads, r.Ceiling)
	fmt.Println("| capacity | Belady hit rate | LRU hit rate | Belady / LRU |")
	fmt.Println("|---:|---:|---:|---:|")
	for _, x := range r.Results {
		ratio := "∞"
		if x.Ratio != nil {
			ratio = fmt.Sprintf("%.2f×", *x.Ratio)
		}
		fmt.Printf("| %d %% | %.3f | %.3f | %s |\n", x.CapacityPct, x.Belady.HitRate, x.LRU.HitRate, ratio)
	}
}
