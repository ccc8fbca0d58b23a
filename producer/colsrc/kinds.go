package colsrc

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/shmloader/shmloader/producer/transform"
)

// Kind is how runs of Parquet physical type p (of width typeLen) give the values of
// Arrow type t to the transforms, the way arrow-go's reader converts them, so that
// both give the same bytes; NoValues when they do not. INT96 pages give Int64Values:
// pageRuns converts them to nanoseconds.
func Kind(t arrow.DataType, p parquet.Type, typeLen int) transform.ValueKind {
	switch t.ID() {
	case arrow.DATE32, arrow.TIME32:
		if p == parquet.Types.Int32 {
			return transform.Int32Values
		}
	case arrow.DATE64:
		if p == parquet.Types.Int32 {
			return transform.DaysValues
		}
	case arrow.TIME64:
		if p == parquet.Types.Int64 {
			return transform.Int64Values
		}
	case arrow.TIMESTAMP:
		switch {
		case p == parquet.Types.Int64:
			return transform.Int64Values
		case p == parquet.Types.Int96 && t.(*arrow.TimestampType).Unit == arrow.Nanosecond:
			return transform.Int64Values
		}
	case arrow.DECIMAL128, arrow.DECIMAL256:
		switch {
		case p == parquet.Types.Int32:
			return transform.DecimalInt32Values
		case p == parquet.Types.Int64:
			return transform.DecimalInt64Values
		case p != parquet.Types.ByteArray && p != parquet.Types.FixedLenByteArray:
		case t.ID() == arrow.DECIMAL128:
			return transform.Decimal128Values
		default:
			return transform.Decimal256Values
		}
	case arrow.DICTIONARY:
		if p == parquet.Types.ByteArray {
			return transform.BytesValues
		}
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		if p == parquet.Types.Int32 {
			return int32Kinds[t.ID()]
		}
	case arrow.INT64, arrow.UINT64:
		if p == parquet.Types.Int64 {
			return transform.Int64Values
		}
	case arrow.FLOAT32:
		if p == parquet.Types.Float {
			return transform.Float32Values
		}
	case arrow.FLOAT64:
		if p == parquet.Types.Double {
			return transform.Float64Values
		}
	case arrow.FLOAT16:
		if p == parquet.Types.FixedLenByteArray && typeLen == 2 {
			return transform.Float16Values
		}
	case arrow.BOOL:
		if p == parquet.Types.Boolean {
			return transform.BoolValues
		}
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		if p == parquet.Types.ByteArray {
			return transform.BytesValues
		}
	}
	return transform.NoValues
}

// int32Kinds reads INT32 pages as the integer types they hold.
var int32Kinds = map[arrow.Type]transform.ValueKind{arrow.INT8: transform.Int8Values, arrow.INT16: transform.Int16Values,
	arrow.INT32: transform.Int32Values, arrow.UINT8: transform.Uint8Values, arrow.UINT16: transform.Uint16Values,
	arrow.UINT32: transform.Uint32Values}
