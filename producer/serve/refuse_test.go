package serve

import (
	"context"
	"strings"
	"testing"
)

// Configurations that could only serve some ranks, or positions outside the run, are
// refused before any segment exists.
func TestRefusedAtStart(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"a rank without batches", "rank 5 of node 0 gets no batches"},
		{"start epoch past the run", "epochs 0..1"},
		{"start step past the epoch", "an epoch has steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			opt := Options{Dir: t.TempDir()}
			switch tc.name {
			case "a rank without batches":
				cfg.DropLast, cfg.BatchSize, cfg.Ranks = false, 5000, 6 // 4 batches for 6 ranks
			case "start epoch past the run":
				opt.StartEpoch = 2
			default:
				opt.StartStep = 1000
			}
			_, err := Run(context.Background(), cfg, opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
