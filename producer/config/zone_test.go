package config

import (
	"testing"
	"time"
)

func TestLoadZone(t *testing.T) {
	at := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)
	for name, want := range map[string]int{
		"": 0, "UTC": 0, "utc": 0, "+05:30": 5*3600 + 30*60, "-03:00": -3 * 3600, "+00:00": 0,
		"America/New_York": -4 * 3600, "Europe/Paris": 2 * 3600, "Asia/Kolkata": 5*3600 + 30*60,
	} {
		loc, err := LoadZone(name)
		if err != nil {
			t.Errorf("LoadZone(%q): %v", name, err)
			continue
		}
		if _, off := at.In(loc).Zone(); off != want {
			t.Errorf("LoadZone(%q): offset %d in July 2024, want %d", name, off, want)
		}
	}
	for _, name := range []string{"Local", "+5:30", "+05:60", "+24:00", "05:00", "Nowhere/City", "../etc/passwd", "+0a:00"} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) accepted", name)
		}
	}
}
