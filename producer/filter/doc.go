// Package filter is the row filter of a serve job: the AND of the config's predicates,
// checked first against each row group's footer statistics (MayMatch, to skip row groups
// that cannot hold a kept row) and then row by row on the decoded columns (Select).
//
// # Semantics
//
// Comparisons (== != < <= > >=) and in / not_in follow SQL: a null never passes them,
// not even != or not_in. is_null and not_null test for Arrow nulls; a NaN is a value,
// not a null.
//
// Numeric columns (int8..int64, uint8..uint64, float16/32/64, and bool as 0 or 1) take
// numeric constants and compare by exact numeric value: an int64 column against 3 is an
// integer comparison, against 2.5 or 1e300 it is exact too (x < 2.5 is x <= 2; x == 2.5
// never holds). A float32 column compares its value as stored, so x == 0.1 does not
// match float32(0.1) (0.100000001490116…): write float32 constants with enough digits,
// or use a range. NaN follows IEEE: every comparison with NaN is false except !=, which
// is true; in never matches NaN, not_in always passes it.
//
// String columns (string, large_string, binary, large_binary) take string constants and
// compare bytewise. A string constant on a numeric column, or a number on a string
// column, is a Compile error naming the column and the line; so is a comparison on any
// other type (lists, structs, dates), which only is_null / not_null accept.
//
// # Pushdown
//
// MayMatch never rules out a row group that has a passing row. It uses min and max where
// the footer has them for the column's kind, and the null count: == v fails when v is
// outside [min, max]; < v when min >= v; <= v when min > v; > v when max <= v; >= v when
// max < v; in when no value lies in [min, max]; != and not_in only when min == max equals
// a value and the column is not a float (NaN, left out of float statistics, passes
// them); any comparison when every row is null; is_null when the null count is 0;
// not_null when every row is null. Float statistics with a NaN bound, uint64, bool and
// float16 columns, and missing statistics count as unknown: the row group is read.
package filter
