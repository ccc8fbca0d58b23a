package pages

// Int96 is a Parquet INT96 value as stored: 8 bytes of nanoseconds in the day, then a
// 4-byte Julian day, both little-endian (Spark's and Impala's timestamps).
type Int96 [12]byte

// Values is a run of rows as Read leaves it, row-aligned: row k's value is at index k of
// the slice of the chunk's physical type, or, when Dict, its dictionary index at Idx[k].
// A null row (Null[k] == 1) holds the zero value (index 0). Byte arrays are views of the
// decoder's buffers, valid until the next Read or Reset.
type Values struct {
	N       int    // rows in this run
	HasNull bool   // some Null[k] is 1; Null is all 0 otherwise
	Null    []byte // 1 for a null row
	Dict    bool   // Idx holds dictionary indices instead of values (Decoder.Indices)
	// Raw, when set, holds the run's values as stored (PLAIN, little-endian, no nulls;
	// Decoder.Raw) in place of the typed slice; valid until the next Read.
	Raw []byte

	Idx  []uint32
	Bool []byte // BOOLEAN: 0 or 1
	I32  []int32
	I64  []int64
	I96  []Int96
	F32  []float32
	F64  []float64
	Bin  [][]byte // BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
}

// grow makes every slice the physical type t needs hold n entries.
func (v *Values) grow(t physical, n int) {
	v.Null = growTo(v.Null, n)
	v.Idx = growTo(v.Idx, n)
	switch t {
	case tBool:
		v.Bool = growTo(v.Bool, n)
	case tInt32:
		v.I32 = growTo(v.I32, n)
	case tInt64:
		v.I64 = growTo(v.I64, n)
	case tInt96:
		v.I96 = growTo(v.I96, n)
	case tFloat:
		v.F32 = growTo(v.F32, n)
	case tDouble:
		v.F64 = growTo(v.F64, n)
	case tByteArray, tFixed:
		v.Bin = growTo(v.Bin, n)
	}
}

func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
