package config

import (
	_ "embed"
	"time"
)

// DefaultYAML is the documented reference config: every key with its default and
// meaning, and an outputs section for the synthetic dataset of `shmloader gen`.
// `shmloader serve --print-config` prints it; it parses with Parse. Treat it as
// read-only.
//
//go:embed default.yaml
var DefaultYAML string

// Default is the config of an empty file: every key at its documented default.
// Dataset and Outputs have no default and must be given.
func Default() Config {
	return Config{
		Job:         "train",
		BatchSize:   1024,
		Epochs:      1,
		Shuffle:     Shuffle{RowGroups: true, Window: 4},
		DropLast:    true,
		Ranks:       1,
		Node:        Node{Rank: 0, Count: 1},
		RingDepth:   8,
		Prefetch:    2,
		Cache:       Cache{Shards: 16},
		Progress:    5 * time.Second,
		DetachGrace: 60 * time.Second,
		StartGrace:  10 * time.Minute,
	}
}
