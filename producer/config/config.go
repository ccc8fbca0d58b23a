// Package config is the YAML configuration of `shmloader serve`: its types, defaults,
// parsing with line-numbered errors, and the documented default file (default.yaml,
// printed by `shmloader serve --print-config`).
//
// Column names in outputs and filters are patterns, resolved against the dataset's
// schema by ExpandColumns once the dataset is open.
package config

import "time"

// Config is one serve job. Zero values are replaced by the documented defaults.
type Config struct {
	Dataset    string        // file, directory or glob of Parquet files (required)
	Job        string        // job name: segment names and trainers' attach(job=...); default "train"
	BatchSize  int           // rows per batch; default 1024
	Seed       uint64        // default 0
	Epochs     uint64        // default 1; 0 means endless
	Shuffle    Shuffle       //
	DropLast   bool          // default true
	Partitions int           // canonical partitions of the row groups; default 0 = automatic (plan.AutoPartitions)
	Ranks      int           // rings on this node, one per local GPU; default 1
	Node       Node          //
	RingDepth  int           // slots per ring; default 8
	Workers    int           // decode workers; default 0 = GOMAXPROCS
	Prefetch   int           // windows decoded ahead of the slowest rank; default 2
	Progress   time.Duration // status line period on stderr; default 5s; 0 turns it off
	// DetachGrace: once every trainer has detached, serve ends (exit 0) if none attaches
	// within this; default 60s; 0: it waits for ever.
	DetachGrace time.Duration
	// StartGrace: a rank no trainer has attached to since serve started makes serve exit
	// (1) after this; default 10m; 0: it waits for ever.
	StartGrace time.Duration
	Cache      Cache       // the local-disk cache of transformed row groups
	Filter     []Predicate // rows kept: every predicate holds (AND)
	Outputs    []Output    // named tensors, in the file's order (at least one)

	Lines  map[string]int // source line of each key path ("outputs.features.transforms[1]"), for errors
	Source string         // name of the file parsed, for errors; "" when built in code
}

// Shuffle says how each epoch is reordered from (seed, epoch).
type Shuffle struct {
	RowGroups bool // permute the order of row groups; default true
	Window    int  // rows of this many consecutive row groups are mixed; default 4; 0: rows keep file order
}

// Cache is the local-disk cache of transformed row groups (package cache).
type Cache struct {
	Dir    string // "" (the default): no cache
	Size   int64  // bytes; default 0 = automatic (this node's transformed data, at most half the free space)
	Shards int    // default 16
}

// Node places this serve process among the hosts of a multi-node job.
type Node struct {
	Rank  int // default 0
	Count int // default 1
}

// Output is one named tensor of every batch.
type Output struct {
	Name       string
	Columns    []string // patterns as written: names, globs ("f*"), ranges ("f000..f099")
	DType      string   // element type of the tensor; "" = by the source type (float32 for floats, int64 for ints and hashes)
	Transforms []Transform
	Line       int
}

// Transform ops.
const (
	OpCast       = "cast"
	OpFillNull   = "fill_null"
	OpNormalize  = "normalize"
	OpClip       = "clip"
	OpLog1p      = "log1p"
	OpBucketize  = "bucketize"
	OpHashBucket = "hash_bucket"
	OpPad        = "pad"      // list pad/truncate to Length, adds tensor "<name>_len"
	OpDatetime   = "datetime" // a timestamp, date or time column's Part; first step only
	OpDecimal    = "decimal"  // a decimal column as an int64 at Scale; first step only
)

// Transform is one declared step, applied column at a time in order.
type Transform struct {
	Op         string
	DType      string    // cast
	Fill       Scalar    // fill_null
	Mean, Std  []float64 // normalize: one value for every column, or one per column
	Min, Max   *float64  // clip: either may be absent
	Boundaries []float64 // bucketize: strictly increasing; value v -> number of boundaries <= v
	Buckets    uint64    // hash_bucket: number of buckets (>= 1)
	HashSeed   uint64    // hash_bucket: salt; default 0
	Length     int       // pad: fixed list length (>= 1)
	PadValue   float64   // pad: value of missing elements; default 0
	Part       string    // datetime: one of DatetimeParts
	TZ         string    // datetime: IANA zone or ±HH:MM the parts are taken in; "" = the column's
	Unscaled   bool      // decimal: the stored integer, at the column's own scale
	Scale      int       // decimal: the integer value × 10^Scale, when not Unscaled
	// The clip bounds and pad value as written: exact for integers beyond 2^53.
	MinExact, MaxExact, PadExact Scalar
	Line                         int
}

// Scalar is a constant from the config: a number or a string.
type Scalar struct {
	Num   float64
	Str   string
	IsStr bool
	// An integer literal is also kept exactly (float64 holds integers only up to 2^53):
	// Int when it fits int64, else Uint (2^63..2^64-1).
	IsInt, IsUint bool
	Int           int64
	Uint          uint64
}

// Predicate ops.
const (
	PredEq      = "=="
	PredNe      = "!="
	PredLt      = "<"
	PredLe      = "<="
	PredGt      = ">"
	PredGe      = ">="
	PredIn      = "in"
	PredNotIn   = "not_in"
	PredNull    = "is_null"
	PredNotNull = "not_null"
)

// Predicate is one condition of the row filter: column op value(s). A null never
// satisfies a comparison (SQL semantics).
type Predicate struct {
	Column string
	Op     string
	Value  Scalar   // comparisons
	Values []Scalar // in, not_in
	Line   int
}
