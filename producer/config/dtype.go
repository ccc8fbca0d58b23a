package config

import (
	"fmt"
	"strings"

	"github.com/shmloader/shmloader/ring"
)

// ParseDType returns the ring dtype named s ("float32", "int64", ...).
func ParseDType(s string) (ring.DType, error) {
	for d := ring.Bool; d <= ring.Float64; d++ {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q%s (want one of %s)", s, didYouMean(s, DTypeNames()), strings.Join(DTypeNames(), " "))
}

// DTypeNames lists the dtype names in code order, for errors and help text.
func DTypeNames() []string {
	var names []string
	for d := ring.Bool; d <= ring.Float64; d++ {
		names = append(names, d.String())
	}
	return names
}
