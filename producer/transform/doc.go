// Package transform turns the decoded columns of one row group into the bytes of one
// output tensor. Compile checks a config.Output against its source columns' Arrow types
// once; Apply then runs on every row group, a block of rows and one column at a time, and
// writes row-major little-endian values of the output dtype straight into the caller's
// buffers (the ring slot). An Output is immutable, so workers share it.
//
// # Sources and shapes
//
// A column is an integer (int8..int64, uint8..uint64), a float (float16, float32,
// float64), a bool (read as the integer 0 or 1; cast it to bool or uint8 for a 1-byte
// tensor), a string (string, large_string, binary, large_binary, or a dictionary of
// these: a pandas categorical), a timestamp, date or time of day (an integer), a decimal
// (decimal32..decimal256: a float), or a list, large_list or fixed_size_list of
// integers, floats or strings. One non-list column gives a tensor of shape [] (a batch
// is [B]); several give [F] ([B, F]), column i of the output in position i, and must be
// all numeric (int and float columns mix freely) or all strings. A list column stands
// alone and needs pad: its tensor is [Length] and a second tensor "<name>_len" (int32,
// []) holds min(len, Length), 0 for a null list. A fixed_size_list of length D (how
// embeddings are stored) needs no pad: its tensor is [D], a run of rows is one run of
// elements, and a null row is D nulls; with a pad it is read as a list of length D. A
// list of strings takes fill_null and hash_bucket on its elements before pad, like a
// string column.
//
// # Values
//
// Each column's values flow as float64 (floats, decimals) or int64 (integers, bools,
// hashes, times), each with a null flag, through the transforms in the order declared
// (numbered from 1 in errors). uint64 values flow as their bits in an int64 and compare,
// convert and clip as unsigned. A Parquet null is not NaN: fill_null replaces nulls
// only, NaN stays NaN.
//
// A time column flows as the int64 count of its unit as its Arrow type states it (as
// arrow-go's pqarrow reads the file): a timestamp counts s, ms, us or ns since
// 1970-01-01 00:00 UTC (a timestamp without a zone: since that wall clock time), a date32
// days and a date64 ms since 1970-01-01, a time32 or time64 its unit since midnight.
// Parquet has no seconds: pyarrow stores timestamp[s] and time32[s] as ms and date64 as
// DATE days, and pqarrow reads them back as timestamp[ms] (without the zone), time32[ms]
// and date32. An INT96 timestamp (Spark's: 8 bytes of nanoseconds in the day, then a
// 4-byte Julian day, both little-endian) is timestamp[ns] (package colsrc reads it):
// (day - 2440588) × 86400e9 + nanoseconds, and, as in arrow-go, nanoseconds past the
// day or an instant beyond the int64 range are an error (every row of the chunk is
// checked, selected or not). Such a column takes datetime as its first step, or no step
// at all.
//
// A decimal flows as the float64 nearest to unscaled × 10^-scale, ties to even: what
// Python's float(Decimal) gives. It is exact: one IEEE division or product when the
// unscaled value and 10^scale are both exact float64s (|unscaled| <= 2^53, |scale| <=
// 22), else an integer division by 5^scale rounded once (|unscaled| < 2^127, scale
// 0..27), else strconv.ParseFloat of the decimal digits. Parquet stores the unscaled
// value as an INT32, an INT64, or big-endian two's complement in a FIXED_LEN_BYTE_ARRAY
// or BYTE_ARRAY of 1 to 16 bytes (1 to 32 for a decimal256; any other length is an
// error, as in arrow-go, which package colsrc checks).
//
//   - cast{dtype}: converts every value to dtype's value set exactly as the output
//     conversion below does (cast to float32 rounds to float32, to int8 wraps or
//     saturates, to bool gives 0 or 1), so later steps see what numpy's astype would
//     give. The last cast names the output dtype when the output sets none.
//   - fill_null{fill}: nulls become fill. A string fill is for string columns and acts
//     before hash_bucket; on an integer column the fill must be an integer in range.
//   - normalize{mean, std}: (x - mean) / std in float64, one pair for every column or
//     one per stacked column. The result is a float.
//   - clip{min, max}: x < min gives min, x > max gives max; NaN stays NaN. On integers
//     the bounds must be integers (or infinite).
//   - log1p: Go's math.Log1p(x): x < -1 gives NaN, x = -1 gives -Inf. The result is a
//     float; it may differ from other libms' log1p in the last place.
//   - bucketize{boundaries}: the int64 count of boundaries b with b <= x, as
//     numpy.searchsorted(boundaries, x, side="right"); NaN gives len(boundaries).
//     Integers are compared as float64(x), as numpy does.
//   - hash_bucket{buckets, seed}: int64 FNV-1a-64(seed_bytes ‖ value_bytes) mod buckets
//     (the 64-bit hash taken as unsigned). FNV-1a-64 starts at 0xcbf29ce484222325 and for
//     each byte b does h ^= b; h *= 0x100000001b3 (mod 2^64). seed_bytes is the seed as
//     8 bytes little-endian; value_bytes is a string's bytes (no length, no terminator),
//     or an integer's int64 value as 8 bytes little-endian two's complement (a bool is
//     0 or 1, a uint64 its own 8 bytes). Floats are refused: cast them first. A null
//     stays null. The bucket is an int64 (a uint64 if buckets exceeds 2^63).
//     testdata/hash_vectors.json holds checked vectors.
//   - pad{length, pad_value}: a list keeps its first length elements, the rest of the
//     row is pad_value. Steps before pad act on the list's elements, steps after it on
//     all length positions, padding included.
//   - datetime{part, tz}: the first step of a time column. The unix parts convert the
//     count v of the column's unit: unix_seconds is float64(v) divided by the units in a
//     second (numpy's v / 1e9 for ns; a date32 is float64(v) × 86400), unix_ms, unix_us
//     and unix_ns are v × the factor to a finer unit, saturating at the int64 limits, or
//     floor(v / factor) to a coarser one. The calendar parts are those of the instant's
//     wall clock in a zone: s = floor(v / units per second) seconds (sub-second units
//     floor, so -1 ns is 23:59:59.999999999 of 1969-12-31), plus the zone's UTC offset
//     at s; of that local time, year (proleptic Gregorian, astronomical: year 0 is 1 BC),
//     month 1-12, day 1-31, hour 0-23, minute 0-59, second 0-59, day_of_week (Monday 0
//     to Sunday 6, as pandas) and day_of_year 1-366, all int64. The zone is tz when given,
//     else the column's Arrow time zone, else UTC (a timestamp without a zone counts as
//     UTC); an IANA name ("America/New_York", from the tz database built into shmloader,
//     never the host's, so every host gives the same bytes; its release is in
//     `shmloader --version` and keys the config hash and the cache's entries) or a fixed
//     "+HH:MM" / "-HH:MM". The unix parts ignore zones.
//     A date takes no tz; a time of day takes no tz and no date part (it counts from
//     1970-01-01 00:00). A null stays null.
//   - decimal{unscaled | scale}: the first step of a decimal column, read as the int64
//     unscaled × 10^(scale - the column's scale) instead of a float: unscaled keeps the
//     stored integer; scale must be at least the column's. A value beyond the int64
//     range saturates at its limits (a precision up to 18 at the column's scale never
//     does).
//
// # Output dtype and conversion
//
// The output's dtype is Output.DType if set, else the last cast's, else float32 when
// some column ends as a float and int64 otherwise. Converting a float: to float32 or
// float64 round to nearest even, to float16 and bfloat16 likewise (subnormals included,
// overflow to ±Inf); to an integer type it truncates toward zero, NaN gives 0 and values
// out of range saturate at the type's limits; to bool, nonzero (NaN too) gives 1.
// Converting an integer: to a float type rounds to nearest even once; to an integer type
// keeps the low bytes (int64 300 → int8 44, -1 → uint8 255: numpy's astype wrap); to
// bool, nonzero gives 1.
//
// A null still present at the output is written as NaN to a float dtype and 0 to an
// integer or bool dtype; a null list is all pad_value with length 0. Every NaN written,
// null or computed, is the canonical quiet NaN (float64 0x7ff8000000000000, float32
// 0x7fc00000, float16 0x7e00, bfloat16 0x7fc0), so the bytes never depend on the CPU.
//
// # Reading runs
//
// ApplyRuns reads flat columns from runs of typed values (Runs: Go slices of int32,
// int64, float32, float64, bools or byte strings, or indices into a dictionary of
// them, with a ValueKind saying how they become the column's Arrow type) instead of
// Arrow arrays, with the same bytes as Apply; package colsrc gives the runs from
// Parquet pages as the page decoder yields them. A dictionary is transformed once, not
// once per row (rundict.go). Two common forms skip the block's float64/int64 staging: a
// block that is one run of dictionary indices is stored from the entries as the output
// stores them, and a float32 column through fill_null and normalize (either, both in
// either order, casts to float32 anywhere) into a float32 tensor is converted, filled,
// normalized in float64, rounded and stored in one pass (fuse.go; AVX2 on amd64). Tests
// hold both to the steps one after the other.
package transform
