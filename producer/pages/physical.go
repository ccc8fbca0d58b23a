package pages

import "github.com/apache/arrow-go/v18/parquet"

// physical is a Parquet physical type, as this package switches on it.
type physical uint8

const (
	tBool physical = iota
	tInt32
	tInt64
	tInt96
	tFloat
	tDouble
	tByteArray
	tFixed
)

func physicalOf(t parquet.Type) (physical, bool) {
	switch t {
	case parquet.Types.Boolean:
		return tBool, true
	case parquet.Types.Int32:
		return tInt32, true
	case parquet.Types.Int64:
		return tInt64, true
	case parquet.Types.Int96:
		return tInt96, true
	case parquet.Types.Float:
		return tFloat, true
	case parquet.Types.Double:
		return tDouble, true
	case parquet.Types.ByteArray:
		return tByteArray, true
	case parquet.Types.FixedLenByteArray:
		return tFixed, true
	}
	return 0, false
}

// width is the bytes of one PLAIN value of a fixed-width type (0: bit-packed booleans
// and length-prefixed byte arrays).
func width(t physical, typeLen int) int {
	switch t {
	case tInt32, tFloat:
		return 4
	case tInt64, tDouble:
		return 8
	case tInt96:
		return 12
	case tFixed:
		return typeLen
	}
	return 0
}

// maxValues is the most PLAIN values n bytes can hold, to bound counts a header claims.
func maxValues(t physical, typeLen, n int) int {
	switch t {
	case tBool:
		return 8 * n
	case tByteArray:
		return n / 4
	}
	return n / max(width(t, typeLen), 1)
}

// spread moves the valid values of a run, dense at the front, to their rows, back to
// front so that nothing is overwritten before it moves; null rows get the zero value.
func spread(t physical, v *Values, m, valid int) {
	if v.Dict {
		spreadT(v.Idx, v.Null, m, valid)
		return
	}
	switch t {
	case tBool:
		spreadT(v.Bool, v.Null, m, valid)
	case tInt32:
		spreadT(v.I32, v.Null, m, valid)
	case tInt64:
		spreadT(v.I64, v.Null, m, valid)
	case tInt96:
		spreadT(v.I96, v.Null, m, valid)
	case tFloat:
		spreadT(v.F32, v.Null, m, valid)
	case tDouble:
		spreadT(v.F64, v.Null, m, valid)
	case tByteArray, tFixed:
		spreadT(v.Bin, v.Null, m, valid)
	}
}

func spreadT[T any](vals []T, null []byte, m, valid int) {
	var zero T
	j := valid - 1
	for k := m - 1; k > j; k-- {
		if null[k] != 0 {
			vals[k] = zero
		} else {
			vals[k] = vals[j]
			j--
		}
	}
	// From here every row up to k is valid and already in place (j == k).
}
