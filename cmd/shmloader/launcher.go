package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shmloader/shmloader/producer/config"
)

// launcherKeys are the config keys a launcher's environment may set, as torchrun names
// them for its workers (and Kubernetes job specs and launch scripts copy): ranks per node
// from $LOCAL_WORLD_SIZE, this node from $GROUP_RANK and the node count from $NNODES, or
// from $WORLD_SIZE / $LOCAL_WORLD_SIZE where NNODES is not set.
var launcherKeys = []struct{ key, env string }{
	{"ranks", "LOCAL_WORLD_SIZE"},
	{"node.rank", "GROUP_RANK"},
	{"node.count", "NNODES"},
}

// applyLauncherEnv sets the layout keys that no flag gives from the launcher's
// environment: flag > environment > config file. It returns one line per key it set,
// saying where the value came from (and what the config said, when it differs).
func applyLauncherEnv(cfg *config.Config, flags map[string]string, getenv func(string) string) ([]string, error) {
	var notes []string
	for _, k := range launcherKeys {
		if _, given := flags[k.key]; given {
			continue
		}
		v, env := strings.TrimSpace(getenv(k.env)), k.env
		if v == "" && k.key == "node.count" {
			v, env = nodesFromWorld(getenv("WORLD_SIZE"), getenv("LOCAL_WORLD_SIZE"))
		}
		if v == "" {
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return nil, fmt.Errorf("$%s is %q: want a whole number (unset it, or give the flag for %s)", env, v, k.key)
		}
		before := layoutValue(cfg, k.key)
		if err := cfg.Set(k.key, v); err != nil {
			return nil, fmt.Errorf("$%s: %w", env, err)
		}
		note := fmt.Sprintf("%s %s from $%s", k.key, v, env)
		if before != v {
			note += fmt.Sprintf(" (the config says %s)", before)
		}
		notes = append(notes, note)
	}
	return notes, nil
}

// nodesFromWorld is WORLD_SIZE / LOCAL_WORLD_SIZE when both are set and it divides.
func nodesFromWorld(world, local string) (string, string) {
	w, err1 := strconv.Atoi(strings.TrimSpace(world))
	l, err2 := strconv.Atoi(strings.TrimSpace(local))
	if err1 != nil || err2 != nil || l < 1 || w < l || w%l != 0 {
		return "", ""
	}
	return strconv.Itoa(w / l), "WORLD_SIZE / $LOCAL_WORLD_SIZE"
}

func layoutValue(cfg *config.Config, key string) string {
	switch key {
	case "ranks":
		return strconv.Itoa(cfg.Ranks)
	case "node.rank":
		return strconv.Itoa(cfg.Node.Rank)
	default:
		return strconv.Itoa(cfg.Node.Count)
	}
}
