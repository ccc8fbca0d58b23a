package transform

import (
	"os/exec"
	"strings"
	"testing"
)

// Package transform works on typed values and knows nothing of Parquet: colsrc adapts
// the page decoder to it, so that the road down runs one way (dataset → pages → colsrc
// → transform → serve). Nothing it imports, however indirectly, may be arrow-go's
// Parquet packages or the packages above it on that road.
func TestNoParquetBelow(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	const mod = "github.com/shmloader/shmloader/producer/"
	for _, p := range deps {
		switch {
		case strings.HasPrefix(p, "github.com/apache/arrow-go/v18/parquet"),
			p == mod+"pages", p == mod+"dataset", p == mod+"colsrc", p == mod+"filter", p == mod+"serve":
			t.Errorf("transform depends on %s", p)
		}
	}
}
