package main

import (
	"strings"
	"testing"

	"github.com/shmloader/shmloader/producer/config"
)

func TestLauncherEnvironmentSetsTheLayout(t *testing.T) {
	cases := []struct {
		name            string
		env             map[string]string
		flags           map[string]string
		ranks, rank, nn int
		notes           []string
		err             string
	}{
		{name: "none", ranks: 2, rank: 0, nn: 1},
		{name: "torchrun", env: map[string]string{"LOCAL_WORLD_SIZE": "4", "GROUP_RANK": "1", "NNODES": "2"},
			ranks: 4, rank: 1, nn: 2, notes: []string{"ranks 4 from $LOCAL_WORLD_SIZE (the config says 2)", "node.rank 1 from $GROUP_RANK (the config says 0)", "node.count 2 from $NNODES (the config says 1)"}},
		{name: "world size gives the nodes", env: map[string]string{"LOCAL_WORLD_SIZE": "2", "WORLD_SIZE": "6", "GROUP_RANK": "2"},
			ranks: 2, rank: 2, nn: 3, notes: []string{"ranks 2 from $LOCAL_WORLD_SIZE", "node.rank 2 from $GROUP_RANK (the config says 0)", "node.count 3 from $WORLD_SIZE / $LOCAL_WORLD_SIZE (the config says 1)"}},
		{name: "flags win", env: map[string]string{"LOCAL_WORLD_SIZE": "4"}, flags: map[string]string{"ranks": "8"}, ranks: 2, rank: 0, nn: 1},
		{name: "malformed", env: map[string]string{"LOCAL_WORLD_SIZE": "four"}, err: `$LOCAL_WORLD_SIZE is "four"`},
		{name: "out of range", env: map[string]string{"LOCAL_WORLD_SIZE": "0"}, err: "$LOCAL_WORLD_SIZE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte("dataset: x\nranks: 2\n"), "c.yaml")
			if err != nil {
				t.Fatal(err)
			}
			notes, err := applyLauncherEnv(cfg, c.flags, func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("want an error with %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Ranks != c.ranks || cfg.Node.Rank != c.rank || cfg.Node.Count != c.nn {
				t.Fatalf("ranks %d node %d of %d, want %d, %d of %d", cfg.Ranks, cfg.Node.Rank, cfg.Node.Count, c.ranks, c.rank, c.nn)
			}
			if strings.Join(notes, "; ") != strings.Join(c.notes, "; ") {
				t.Fatalf("notes %q, want %q", notes, c.notes)
			}
		})
	}
}
