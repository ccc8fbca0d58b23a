package units

import (
	"math"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{812, "812 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{36 << 10, "36.0 KiB"},
		{1536, "1.5 KiB"},
		{788 << 10, "788.0 KiB"},
		{1<<20 - 1, "1024.0 KiB"}, // one decimal, no carry into the next unit
		{24 << 20, "24.0 MiB"},
		{755<<20 + 600<<10, "755.6 MiB"},
		{3 << 29, "1.5 GiB"},
		{5 << 40, "5.0 TiB"},
		{2048 << 40, "2.0 PiB"},
		{-1536, "-1.5 KiB"},
		{-5, "-5 B"},
		{math.MinInt64, "-8.0 EiB"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Bytes(uint64(math.MaxUint64)); got != "16.0 EiB" {
		t.Errorf("Bytes(MaxUint64) = %q", got)
	}
	if got := Bytes(uint32(2048)); got != "2.0 KiB" {
		t.Errorf("Bytes(uint32(2048)) = %q", got)
	}
}
