package testkit

import (
	"encoding/binary"
	"math"
	"testing"
)

// F64s reads b as little-endian float64s (a float64 tensor's bytes).
func F64s(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// Int64s reads b as little-endian int64s (an int64 tensor's bytes).
func Int64s(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// SameFloats compares with NaN equal to NaN and -0 distinct from +0.
func SameFloats(t testing.TB, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d: %v", what, len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !(g == w && math.Signbit(g) == math.Signbit(w) || g != g && w != w) {
			t.Errorf("%s[%d] = %v, want %v (all: %v)", what, i, g, w, got)
		}
	}
}

// SameInts compares two slices of integers value by value.
func SameInts(t testing.TB, what string, got, want []int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d: %v", what, len(got), len(want), got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %d, want %d (all: %v)", what, i, got[i], want[i], got)
		}
	}
}
