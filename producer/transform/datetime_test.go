package transform

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shmloader/shmloader/internal/testkit"
	"github.com/shmloader/shmloader/producer/config"
)

// dt is one datetime step.
func dt(part, tz string) config.Transform {
	return config.Transform{Op: config.OpDatetime, Part: part, TZ: tz}
}

// partOf runs datetime part (in tz) over vals of type typ and returns the int64 output.
func partOf(t *testing.T, typ arrow.DataType, part, tz string, vals []any) []int64 {
	t.Helper()
	o := steps(dt(part, tz))
	o.DType = "int64"
	_, dst := run(t, o, nil, mk("t", typ, vals))
	return testkit.Int64s(dst[0])
}

// want is what the time package says of instant (sec, nsec) in loc.
func want(part string, at time.Time) int64 {
	switch part {
	case "year":
		return int64(at.Year())
	case "month":
		return int64(at.Month())
	case "day":
		return int64(at.Day())
	case "hour":
		return int64(at.Hour())
	case "minute":
		return int64(at.Minute())
	case "second":
		return int64(at.Second())
	case "day_of_week":
		return int64(at.Weekday()+6) % 7
	case "day_of_year":
		return int64(at.YearDay())
	}
	panic(part)
}

var calendarParts = []string{"year", "month", "day", "hour", "minute", "second", "day_of_week", "day_of_year"}

// TestCivil: the arithmetic calendar agrees with the time package, far into the past
// and the future, leap days and century years included.
func TestCivil(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	days := []int64{0, -1, 1, 59, 60, -719468, -719469, 10957, 11016, 11017, -25508, -25509, 19723, 20088, 2932896, -2932897}
	for range 20000 {
		days = append(days, rng.Int64N(8e8)-4e8)
	}
	for _, d := range days {
		at := time.Unix(d*86400, 0).UTC()
		y, m, dd := civil(d)
		if y != int64(at.Year()) || m != int64(at.Month()) || dd != int64(at.Day()) {
			t.Fatalf("civil(%d) = %d-%d-%d, time says %s", d, y, m, dd, at.Format("2006-01-02"))
		}
		if got := dayOfYear(y, m, dd); got != int64(at.YearDay()) {
			t.Fatalf("day %d (%s): day_of_year %d, want %d", d, at.Format("2006-01-02"), got, at.YearDay())
		}
		if got := pDayOfWeek.of(d, 0); got != want("day_of_week", at) {
			t.Fatalf("day %d: day_of_week %d, want %d", d, got, want("day_of_week", at))
		}
	}
}

// TestDatetimeParts: every part of every unit, in UTC, in fixed offsets and in zones
// with DST (half-hour DST too), agrees with the time package on random instants from
// year 1 to 9999 (the full int64 range for ns).
func TestDatetimeParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	minSec, maxSec := time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
	for _, unit := range []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond} {
		per := int64(time.Second / unit.Multiplier())
		lo, hi := minSec*per, maxSec*per
		if unit == arrow.Nanosecond {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		vals := []any{0, -1, 1, per - 1, -per, 86400*per - 1}
		for range 3000 {
			vals = append(vals, int(lo+rng.Int64N(hi/2-lo/2)*2))
		}
		for _, tz := range []string{"", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "+05:45", "-09:30", "Europe/London"} {
			loc, err := config.LoadZone(tz)
			if err != nil {
				t.Fatal(err)
			}
			typ := &arrow.TimestampType{Unit: unit, TimeZone: tz}
			for _, part := range calendarParts {
				got := partOf(t, typ, part, "", vals)
				for i, v := range vals {
					x := i64(v)
					at := time.Unix(floorDiv(x, per), floorMod(x, per)*int64(unit.Multiplier())).In(loc)
					if got[i] != want(part, at) {
						t.Fatalf("%s %s of %d: %d, want %d (%s)", typ, part, x, got[i], want(part, at), at)
					}
				}
			}
		}
	}
}

// TestDatetimeEdges: DST transitions, leap days, pre-1970 instants, nulls.
func TestDatetimeEdges(t *testing.T) {
	utc := func(s string) int {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return int(at.UnixMilli())
	}
	ny := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}
	vals := []any{
		utc("2021-03-14T06:59:59.999Z"), utc("2021-03-14T07:00:00Z"), // EST 01:59:59, EDT 03:00
		utc("2021-11-07T05:59:59Z"), utc("2021-11-07T06:00:00Z"), // EDT 01:59:59, EST 01:00 again
		utc("2000-02-29T12:00:00Z"), utc("1900-03-01T12:00:00Z"), utc("2024-12-31T23:00:00Z"),
		-1, nil, utc("1969-12-31T00:00:00Z"),
	}
	cases := []struct {
		part, tz string
		typ      arrow.DataType
		want     []int64
	}{
		{"hour", "", ny, []int64{1, 3, 1, 1, 7, 7, 18, 18, 0, 19}},
		{"hour", "UTC", ny, []int64{6, 7, 5, 6, 12, 12, 23, 23, 0, 0}},
		{"minute", "", ny, []int64{59, 0, 59, 0, 0, 0, 0, 59, 0, 0}},
		{"day", "", ny, []int64{14, 14, 7, 7, 29, 1, 31, 31, 0, 30}},
		{"day_of_year", "", ny, []int64{73, 73, 311, 311, 60, 60, 366, 365, 0, 364}},
		{"day_of_year", "", arrow.FixedWidthTypes.Timestamp_ms, []int64{73, 73, 311, 311, 60, 60, 366, 365, 0, 365}},
		{"day_of_week", "", ny, []int64{6, 6, 6, 6, 1, 3, 1, 2, 0, 1}},
		{"second", "", arrow.FixedWidthTypes.Timestamp_ms, []int64{59, 0, 59, 0, 0, 0, 0, 59, 0, 0}},
		{"year", "Asia/Tokyo", ny, []int64{2021, 2021, 2021, 2021, 2000, 1900, 2025, 1970, 0, 1969}},
	}
	for _, c := range cases {
		testkit.SameInts(t, c.typ.String()+" "+c.part+" tz="+c.tz, partOf(t, c.typ, c.part, c.tz, vals), c.want)
	}
}

// TestDatetimeUnix: unit conversions floor, saturate, and unix_seconds divides as numpy.
func TestDatetimeUnix(t *testing.T) {
	ts := arrow.FixedWidthTypes.Timestamp_s
	vals := []any{0, -1, 1, math.MaxInt64 / 10, math.MinInt64 / 10, math.MaxInt64, nil}
	testkit.SameInts(t, "s→ns", partOf(t, ts, "unix_ns", "", vals), []int64{0, -1e9, 1e9, math.MaxInt64, math.MinInt64, math.MaxInt64, 0})
	testkit.SameInts(t, "s→ms", partOf(t, ts, "unix_ms", "", vals[:3]), []int64{0, -1000, 1000})
	ns := arrow.FixedWidthTypes.Timestamp_ns
	vals = []any{0, -1, 1, 999_999, 1_000_000, -1_000_001, math.MinInt64}
	testkit.SameInts(t, "ns→ms", partOf(t, ns, "unix_ms", "", vals), []int64{0, -1, 0, 0, 1, -2, math.MinInt64/1_000_000 - 1})
	testkit.SameInts(t, "ns→us", partOf(t, ns, "unix_us", "", vals[:3]), []int64{0, -1, 0})
	testkit.SameInts(t, "date32→ms", partOf(t, arrow.FixedWidthTypes.Date32, "unix_ms", "", []any{1, -1}), []int64{86400000, -86400000})
	testkit.SameInts(t, "time64us→ms", partOf(t, arrow.FixedWidthTypes.Time64us, "unix_ms", "", []any{1500, -1}), []int64{1, -1})

	secs := func(typ arrow.DataType, vals []any) []float64 {
		o := steps(dt("unix_seconds", ""))
		o.DType = "float64"
		_, dst := run(t, o, nil, mk("t", typ, vals))
		return testkit.F64s(dst[0])
	}
	big := 1_700_000_000_123_456_789
	testkit.SameFloats(t, "ns seconds", secs(ns, []any{1_500_000_000, -1, big, nil}), []float64{1.5, -1e-9, float64(big) / 1e9, nan})
	testkit.SameFloats(t, "date32 seconds", secs(arrow.FixedWidthTypes.Date32, []any{2, -3}), []float64{172800, -259200})
	testkit.SameFloats(t, "date64 seconds", secs(arrow.FixedWidthTypes.Date64, []any{86_400_000}), []float64{86400})
	// The default output of unix_seconds is float32, like any float.
	_, dst := run(t, steps(dt("unix_seconds", "")), nil, mk("t", ns, []any{1_500_000_000}))
	testkit.SameFloats(t, "float32 default", f32s(dst[0]), []float64{1.5})
}

// TestDatetimeTypes: dates and times of day, and their raw default flow.
func TestDatetimeTypes(t *testing.T) {
	d32 := []any{0, 11016, -1, 19723, nil} // 1970-01-01, 2000-02-29, 1969-12-31, 2024-01-01
	testkit.SameInts(t, "date32 year", partOf(t, arrow.FixedWidthTypes.Date32, "year", "", d32), []int64{1970, 2000, 1969, 2024, 0})
	testkit.SameInts(t, "date32 dow", partOf(t, arrow.FixedWidthTypes.Date32, "day_of_week", "", d32), []int64{3, 1, 2, 0, 0})
	testkit.SameInts(t, "date32 hour", partOf(t, arrow.FixedWidthTypes.Date32, "hour", "", d32), []int64{0, 0, 0, 0, 0})
	d64 := []any{11016 * 86400000, -1}
	testkit.SameInts(t, "date64 day", partOf(t, arrow.FixedWidthTypes.Date64, "day", "", d64), []int64{29, 31})
	t32 := []any{0, 3661, 86399, nil}
	testkit.SameInts(t, "time32s hour", partOf(t, arrow.FixedWidthTypes.Time32s, "hour", "", t32), []int64{0, 1, 23, 0})
	testkit.SameInts(t, "time32s second", partOf(t, arrow.FixedWidthTypes.Time32s, "second", "", t32), []int64{0, 1, 59, 0})
	testkit.SameInts(t, "time64ns minute", partOf(t, arrow.FixedWidthTypes.Time64ns, "minute", "", []any{3661_000_000_000}), []int64{1})

	// No step: the int64 counts as stored, nulls 0.
	for _, typ := range []arrow.DataType{arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Time32ms,
		arrow.FixedWidthTypes.Timestamp_us, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}} {
		out, dst := run(t, config.Output{}, nil, mk("t", typ, []any{5, -7, nil}))
		if out.dtype.String() != "int64" {
			t.Errorf("%s: default dtype %s", typ, out.dtype)
		}
		testkit.SameInts(t, typ.String(), testkit.Int64s(dst[0]), []int64{5, -7, 0})
	}
	// Steps after datetime act on its result.
	o := steps(dt("hour", ""), config.Transform{Op: config.OpFillNull, Fill: config.Scalar{Num: -1, IsInt: true, Int: -1}},
		config.Transform{Op: config.OpCast, DType: "int8"})
	_, dst := run(t, o, nil, mk("t", arrow.FixedWidthTypes.Timestamp_s, []any{7200, nil}))
	if dst[0][0] != 2 || int8(dst[0][1]) != -1 {
		t.Errorf("hour, fill_null, cast: %v", dst[0])
	}
}

// TestDatetimeRefusals: the errors of Compile name the column and say what to do.
func TestDatetimeRefusals(t *testing.T) {
	ts := arrow.FixedWidthTypes.Timestamp_ms
	cases := []struct {
		typ  arrow.DataType
		o    config.Output
		want string
	}{
		{ts, steps(config.Transform{Op: config.OpFillNull}), "takes datetime as its first step"},
		{ts, steps(config.Transform{Op: config.OpLog1p}), "written as its int64 milliseconds"},
		{arrow.PrimitiveTypes.Int64, steps(dt("hour", "")), "datetime takes timestamp, date and time columns"},
		{arrow.FixedWidthTypes.Time64us, steps(dt("year", "")), "a time of day has no year"},
		{arrow.FixedWidthTypes.Date32, steps(dt("day", "UTC")), "a date has no time zone"},
		{&arrow.TimestampType{Unit: arrow.Second, TimeZone: "Mars/Olympus"}, steps(dt("hour", "")), "name the zone with tz"},
		{ts, steps(dt("hour", "Nowhere")), `unknown time zone "Nowhere"`},
		{ts, steps(dt("week", "")), `unknown part "week"`},
		{ts, steps(config.Transform{Op: config.OpLog1p}, dt("hour", "")), "takes datetime as its first step"},
	}
	for _, c := range cases {
		_, err := Compile(withName(c.o), []arrow.Field{{Name: "t", Type: c.typ}})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `column "t"`) {
			t.Errorf("%s %+v: %v, want %q", c.typ, c.o.Transforms, err, c.want)
		}
	}
	// A zone the column names but unix_* never needs is not looked up.
	typ := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Mars/Olympus"}
	testkit.SameInts(t, "unix_ms", partOf(t, typ, "unix_ms", "", []any{2}), []int64{2000})
}

func withName(o config.Output) config.Output {
	o.Name = "out"
	return o
}

// TestZoneCacheExtremes: instants beyond every zone's rules and at the int64 limits
// neither panic nor disagree with an uncached lookup.
func TestZoneCacheExtremes(t *testing.T) {
	loc, err := config.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	secs := []int64{math.MinInt64, math.MinInt64 + 1, -zoneSpan - 1, -zoneSpan, -1e15, 0, 1e15, zoneSpan, zoneSpan + 1, math.MaxInt64}
	var zc zoneCache
	for _, s := range secs {
		var fresh zoneCache
		if a, b := zc.offset(loc, s), fresh.offset(loc, s); a != b {
			t.Errorf("offset at %d: cached %d, fresh %d", s, a, b)
		}
	}
	vals := []any{math.MinInt64, math.MaxInt64, -1, 0}
	for _, part := range calendarParts {
		partOf(t, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"}, part, "", vals)
	}
}
