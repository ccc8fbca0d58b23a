package testkit

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Array is an array of type t holding vals, each as Append takes it.
func Array(t arrow.DataType, vals []any) arrow.Array {
	b := array.NewBuilder(memory.DefaultAllocator, t)
	defer b.Release()
	for _, v := range vals {
		Append(b, v)
	}
	return b.NewArray()
}

// Int64 is v (an int, int64 or uint64, whose bits it keeps) as an int64.
func Int64(v any) int64 {
	switch v := v.(type) {
	case uint64:
		return int64(v)
	case int64:
		return v
	}
	return int64(v.(int))
}

// Append appends v to b: nil is a null; integers, times and decimals take an int, int64
// or uint64 (a decimal also its decimal128.Num or decimal256.Num), floats a float64,
// bools a bool, strings, binaries and dictionaries of strings a string, lists an []any.
func Append(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(Int64(v)))
	case *array.Int16Builder:
		b.Append(int16(Int64(v)))
	case *array.Int32Builder:
		b.Append(int32(Int64(v)))
	case *array.Int64Builder:
		b.Append(Int64(v))
	case *array.Uint8Builder:
		b.Append(uint8(Int64(v)))
	case *array.Uint16Builder:
		b.Append(uint16(Int64(v)))
	case *array.Uint32Builder:
		b.Append(uint32(Int64(v)))
	case *array.Uint64Builder:
		b.Append(uint64(Int64(v)))
	case *array.Float16Builder:
		b.Append(float16.New(float32(v.(float64))))
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append([]byte(v.(string)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(Int64(v)))
	case *array.Date32Builder:
		b.Append(arrow.Date32(Int64(v)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(Int64(v)))
	case *array.Time32Builder:
		b.Append(arrow.Time32(Int64(v)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(Int64(v)))
	case *array.Decimal128Builder:
		if n, ok := v.(decimal128.Num); ok {
			b.Append(n)
		} else {
			b.Append(decimal128.FromI64(Int64(v)))
		}
	case *array.Decimal256Builder:
		if n, ok := v.(decimal256.Num); ok {
			b.Append(n)
		} else {
			b.Append(decimal256.FromI64(Int64(v)))
		}
	case *array.BinaryDictionaryBuilder:
		if err := b.AppendString(v.(string)); err != nil {
			panic(err)
		}
	case *array.ListBuilder:
		b.Append(true)
		for _, e := range v.([]any) {
			Append(b.ValueBuilder(), e)
		}
	case *array.LargeListBuilder:
		b.Append(true)
		for _, e := range v.([]any) {
			Append(b.ValueBuilder(), e)
		}
	case *array.FixedSizeListBuilder:
		b.Append(true)
		for _, e := range v.([]any) {
			Append(b.ValueBuilder(), e)
		}
	default:
		panic(fmt.Sprintf("testkit: no case for %T", b))
	}
}
