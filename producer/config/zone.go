package config

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// tzdata is the IANA time zone database shmloader resolves zone names from (release
// 2025c; tzdata/README.md). Not the host's: hosts with other releases would serve other
// bytes for a zone whose rules changed, and a slim container may have none at all.
//
//go:embed tzdata/zoneinfo.zip
var tzdata []byte

// TZDataRelease names the release of the built-in time zone database.
const TZDataRelease = "2025c"

var (
	zonesOnce sync.Once
	zones     map[string]*zip.File
	zonesErr  error
)

// zoneData reads one zone's TZif data from the built-in database.
func zoneData(name string) ([]byte, bool) {
	zonesOnce.Do(func() {
		r, err := zip.NewReader(bytes.NewReader(tzdata), int64(len(tzdata)))
		if err != nil {
			zonesErr = err
			return
		}
		zones = make(map[string]*zip.File, len(r.File))
		for _, f := range r.File {
			zones[f.Name] = f
		}
	})
	f, ok := zones[name]
	if zonesErr != nil || !ok {
		return nil, false
	}
	rc, err := f.Open()
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, err == nil
}

// DatetimeParts are the values the datetime step takes from a time column, in the order
// of default.yaml.
var DatetimeParts = []string{
	"unix_seconds", "unix_ms", "unix_us", "unix_ns",
	"year", "month", "day", "hour", "minute", "second", "day_of_week", "day_of_year",
}

// MaxDecimalScale bounds decimal's scale: a decimal256 holds 76 digits.
const MaxDecimalScale = 76

// LoadZone resolves a time zone as Arrow names them: "" or any spelling of "UTC" is UTC,
// "+HH:MM" or "-HH:MM" a fixed offset, anything else an IANA name ("America/New_York")
// from the tz database built into shmloader (never the host's, whose release may
// differ). "Local" is refused: the bytes would depend on the host.
func LoadZone(name string) (*time.Location, error) {
	switch {
	case name == "" || strings.EqualFold(name, "utc"):
		return time.UTC, nil
	case name == "Local":
		return nil, fmt.Errorf("time zone %q would depend on the host: name a zone such as \"Europe/Paris\" or an offset such as \"+01:00\"", name)
	case len(name) == 6 && (name[0] == '+' || name[0] == '-') && name[3] == ':':
		h, m := digits2(name[1:3]), digits2(name[4:6])
		if h < 0 || h > 23 || m < 0 || m > 59 {
			return nil, fmt.Errorf("time zone offset %q: want ±HH:MM, HH up to 23, MM up to 59", name)
		}
		off := (h*60 + m) * 60
		if name[0] == '-' {
			off = -off
		}
		return time.FixedZone(name, off), nil
	}
	data, ok := zoneData(name)
	if !ok {
		return nil, fmt.Errorf("unknown time zone %q: want an IANA name such as \"America/New_York\", \"UTC\" or an offset such as \"+05:30\"", name)
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %v", name, err)
	}
	return loc, nil
}

// digits2 is the value of two decimal digits, -1 for anything else.
func digits2(s string) int {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}
