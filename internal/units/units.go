// Package units formats byte counts for people, one way for the whole module: whole
// bytes under 1 KiB ("812 B"), otherwise one decimal in the largest binary unit the
// count reaches, up to EiB ("36.0 KiB", "1.5 GiB", "16.0 EiB"). The Python package
// mirrors it (shmloader._jobs._size_text) for the messages it words itself.
package units

import "fmt"

// Integer is any integer type a byte count is held in.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

var names = [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// Bytes formats n bytes with a binary unit; a negative count keeps its sign.
func Bytes[N Integer](n N) string {
	if n < 0 {
		// The magnitude as uint64 also holds the most negative int64.
		return "-" + format(uint64(-(int64(n)+1))+1)
	}
	return format(uint64(n))
}

func format(n uint64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(names)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", v, names[u])
}
