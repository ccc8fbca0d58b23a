package transform

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// ValueKind says which slice of Values holds a column's values and how they become the
// values of the column's Arrow type, so that ApplyRuns gives ApplyTo's bytes.
type ValueKind uint8

const (
	NoValues           ValueKind = iota
	Int32Values                  // I32: int32, date32, time32
	Int8Values                   // I32 as int8 (its low byte)
	Int16Values                  // I32 as int16
	Uint8Values                  // I32 as uint8
	Uint16Values                 // I32 as uint16
	Uint32Values                 // I32 as uint32
	Int64Values                  // I64: int64, uint64's bits, time64, timestamp, date64 ms
	Float32Values                // F32
	Float64Values                // F64
	Float16Values                // Bin: 2 bytes, little-endian
	BoolValues                   // Bool: 0 or 1
	BytesValues                  // Bin: a string's or binary's bytes
	DaysValues                   // I32: days since 1970-01-01, read as date64's ms
	DecimalInt32Values           // I32: a decimal's unscaled value
	DecimalInt64Values           // I64: a decimal's unscaled value
	Decimal128Values             // Bin: unscaled, big-endian two's complement, 1 to 16 bytes
	Decimal256Values             // Bin: the same, 1 to 32 bytes
)

func (k ValueKind) String() string {
	return [...]string{"none", "int32", "int32 as int8", "int32 as int16", "int32 as uint8", "int32 as uint16",
		"int32 as uint32", "int64", "float32", "float64", "float16", "bool", "bytes", "int32 days",
		"int32 decimal", "int64 decimal", "decimal128 bytes", "decimal256 bytes"}[k]
}

// RawBytes says whether a run of kind k may come as Values.Raw: its values as stored,
// little-endian, 4 or 8 bytes each.
func (k ValueKind) RawBytes() bool { return k >= Int32Values && k <= Float64Values }

// Values is a run of one column's rows as a Runs source gives it, row-aligned: row k's
// value is at index k of the slice its ValueKind names (or in Raw), or, when Dict, its
// index into the source's dictionary is Idx[k]. Null[k] is 1 for a null row, which may
// hold any value, and 0 for the others (all 0 unless HasNull). The slices stay valid
// until the source's next Next.
type Values struct {
	N       int
	HasNull bool
	Null    []byte
	Dict    bool
	// Raw, when set, holds the run's values as stored in place of I32..F64: for the kinds
	// RawBytes accepts, without nulls.
	Raw  []byte
	Idx  []uint32
	Bool []byte
	I32  []int32
	I64  []int64
	F32  []float32
	F64  []float64
	Bin  [][]byte
}

// check says whether v's slices hold n rows of kind k.
func (v *Values) check(n int, k ValueKind) error {
	have := n
	switch {
	case v.HasNull && len(v.Null) < n:
		return fmt.Errorf("%d null flags for %d rows", len(v.Null), n)
	case v.Dict:
		have = len(v.Idx)
	case v.Raw != nil && k.RawBytes():
		size := 4
		if k == Int64Values || k == Float64Values {
			size = 8
		}
		have = len(v.Raw) / size
	case v.Raw != nil:
		return fmt.Errorf("raw bytes of %s values", k)
	case k == BoolValues:
		have = len(v.Bool)
	case k == Int64Values || k == DecimalInt64Values:
		have = len(v.I64)
	case k == Float32Values:
		have = len(v.F32)
	case k == Float64Values:
		have = len(v.F64)
	case k == Float16Values || k == BytesValues || k == Decimal128Values || k == Decimal256Values:
		have = len(v.Bin)
	default:
		have = len(v.I32)
	}
	if have < n {
		return fmt.Errorf("%d values for %d rows", have, n)
	}
	return nil
}

// Runs gives one column's values a run at a time, in row order.
type Runs interface {
	// Next reads the next run, of 1 to n rows, into v. A run of indices (Dict) points
	// into the dictionary as it is when Next returns: every index of a row that is not
	// null is below its N.
	Next(n int, v *Values) error
	// Dictionary is what the runs' indices point into: its N entries (none null, not
	// Dict, not Raw) and a number that changes whenever the entries do. It stays the
	// same through one ApplyRuns (a Parquet chunk has at most one dictionary page).
	Dictionary() (*Values, uint64)
}

// Column is one column of an output as ApplyRuns reads it: its runs, their values of
// kind Kind.
type Column struct {
	Runs Runs
	Kind ValueKind
}

// ReadsValues says whether column j of the output (in Columns() order) can be read
// from runs of kind k with ApplyRuns: not a list, and k one of its type's kinds.
func (o *Output) ReadsValues(j int, k ValueKind) bool {
	return j >= 0 && j < len(o.cols) && o.pad == 0 && o.cols[j].src.reads(k)
}

// ColumnType is the Arrow type column j of the output was compiled for.
func (o *Output) ColumnType(j int) arrow.DataType { return o.cols[j].src.typ }

// reads says whether runs of kind k hold values of s's type.
func (s *source) reads(k ValueKind) bool {
	if s.list {
		return false
	}
	switch s.typ.ID() {
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return k == Int32Values
	case arrow.INT8:
		return k == Int8Values
	case arrow.INT16:
		return k == Int16Values
	case arrow.UINT8:
		return k == Uint8Values
	case arrow.UINT16:
		return k == Uint16Values
	case arrow.UINT32:
		return k == Uint32Values
	case arrow.INT64, arrow.UINT64, arrow.TIME64, arrow.TIMESTAMP:
		return k == Int64Values
	case arrow.DATE64:
		return k == DaysValues || k == Int64Values
	case arrow.FLOAT32:
		return k == Float32Values
	case arrow.FLOAT64:
		return k == Float64Values
	case arrow.FLOAT16:
		return k == Float16Values
	case arrow.BOOL:
		return k == BoolValues
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return k == BytesValues
	case arrow.DICTIONARY:
		return s.dict && k == BytesValues
	case arrow.DECIMAL128:
		return k == DecimalInt32Values || k == DecimalInt64Values || k == Decimal128Values
	case arrow.DECIMAL256:
		return k == DecimalInt32Values || k == DecimalInt64Values || k == Decimal256Values
	}
	return false
}
