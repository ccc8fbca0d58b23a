package transform

import (
	"math"
	"time"
)

// part is what a datetime step takes from a time value, in config.DatetimeParts order.
type part uint8

const (
	pUnixSeconds part = iota
	pUnixMs
	pUnixUs
	pUnixNs
	pYear
	pMonth
	pDay
	pHour
	pMinute
	pSecond
	pDayOfWeek
	pDayOfYear
)

// zoned says whether the part depends on the zone (unix_* never does).
func (p part) zoned() bool { return p >= pYear }

// dated says whether the part needs a date (a time of day has none).
func (p part) dated() bool {
	return p == pYear || p == pMonth || p == pDay || p == pDayOfWeek || p == pDayOfYear
}

// timeOp is a compiled datetime step: values are int64 counts of unit nanoseconds (a
// day's for date32) since 1970-01-01 00:00 UTC, or since midnight for a time of day.
type timeOp struct {
	part part
	unit int64
	loc  *time.Location // nil: UTC, no zone lookups at all
}

// run replaces the first n values of w (ints) by the part: ints, or floats for
// unix_seconds.
func (t *timeOp) run(w *work, n int) {
	iv := w.i[:n]
	switch t.part {
	case pUnixSeconds:
		f := w.f[:n]
		if t.unit >= nsPerSec {
			m := float64(t.unit / nsPerSec) // 1 or 86400: the product is exact
			for k, v := range iv {
				f[k] = float64(v) * m
			}
			break
		}
		d := float64(nsPerSec / t.unit)
		for k, v := range iv {
			f[k] = float64(v) / d
		}
	case pUnixMs, pUnixUs, pUnixNs:
		to := [...]int64{1e6, 1e3, 1}[t.part-pUnixMs]
		if t.unit >= to {
			m := t.unit / to
			for k, v := range iv {
				iv[k] = satMul(v, m)
			}
			break
		}
		d := to / t.unit
		for k, v := range iv {
			iv[k] = floorDiv(v, d)
		}
	default:
		t.parts(iv)
	}
}

// parts computes a calendar or clock part of every value in place. The civil date comes
// from the day count by arithmetic alone; a zone only shifts the second of the day by
// its offset at that instant, found through the time package and cached for as long as
// the offset holds (a DST period), so sorted or clustered values look up rarely.
func (t *timeOp) parts(iv []int64) {
	perDay := nsPerDay / t.unit // units in a day: 1 for date32
	perSec := max(nsPerSec/t.unit, 1)
	var zc zoneCache
	for k, v := range iv {
		days := floorDiv(v, perDay)
		sod := (v - days*perDay) / perSec // second of the day
		if t.loc != nil {
			sod += zc.offset(t.loc, days*86400+sod)
			if sod < 0 {
				sod, days = sod+86400, days-1
			} else if sod >= 86400 {
				sod, days = sod-86400, days+1
			}
		}
		iv[k] = t.part.of(days, sod)
	}
}

// of is part p of the instant days × 86400 + sod seconds (0 <= sod < 86400) after
// 1970-01-01 00:00 in the proleptic Gregorian calendar.
func (p part) of(days, sod int64) int64 {
	switch p {
	case pHour:
		return sod / 3600
	case pMinute:
		return sod / 60 % 60
	case pSecond:
		return sod % 60
	case pDayOfWeek:
		return floorMod(days+3, 7) // 1970-01-01 was a Thursday; Monday is 0
	}
	y, m, d := civil(days)
	switch p {
	case pYear:
		return y
	case pMonth:
		return m
	case pDay:
		return d
	}
	return dayOfYear(y, m, d)
}

// civil is the (year, month 1-12, day 1-31) of a day count since 1970-01-01: Howard
// Hinnant's civil_from_days, in 400-year eras that start on March 1st, exact over the
// whole int64 range of the inputs it gets (|days| < 2^47).
func civil(days int64) (y, m, d int64) {
	z := days + 719468 // days since 0000-03-01
	era := floorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1st
	mp := (5*doy + 2) / 153                                // [0, 11], March is 0
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysBefore is the days of a common year before each month.
var daysBefore = [...]int64{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}

func dayOfYear(y, m, d int64) int64 {
	n := daysBefore[m-1] + d
	if m > 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		n++
	}
	return n
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	r := a % b
	if r < 0 {
		r += b
	}
	return r
}

// zoneSpan bounds the instants handed to the time package, whose internal seconds
// since year 1 would overflow near the int64 limits; beyond it the offset of the span's
// edge holds (about ±146 billion years: no zone has rules there).
const zoneSpan = 1 << 62

// zoneCache remembers a zone's offset over [lo, hi), the span its rule holds.
type zoneCache struct {
	ok     bool
	lo, hi int64
	off    int64
}

func (z *zoneCache) offset(loc *time.Location, sec int64) int64 {
	if z.ok && sec >= z.lo && sec < z.hi {
		return z.off
	}
	at := time.Unix(min(max(sec, -zoneSpan), zoneSpan), 0).In(loc)
	_, off := at.Zone()
	start, end := at.ZoneBounds()
	z.ok, z.off, z.lo, z.hi = true, int64(off), math.MinInt64, math.MaxInt64
	if !start.IsZero() {
		z.lo = start.Unix()
	}
	if !end.IsZero() {
		z.hi = end.Unix()
	}
	return z.off
}
