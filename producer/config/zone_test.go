package config

import (
	"testing"
	"time"
)

// Zones come from the database built into shmloader, whatever the host has: with
// ZONEINFO naming an empty directory (as on a host with none) a zone still resolves, and
// to the rules of a recent release: Mexico City has kept standard time all year since
// tzdata 2022f, which an older host database would not know.
func TestZonesComeFromTheBuiltInDatabase(t *testing.T) {
	t.Setenv("ZONEINFO", t.TempDir())
	loc, err := LoadZone("America/Mexico_City")
	if err != nil {
		t.Fatal(err)
	}
	if _, off := time.Date(2023, 7, 1, 12, 0, 0, 0, time.UTC).In(loc).Zone(); off != -6*3600 {
		t.Fatalf("Mexico City in July 2023: offset %d s, want -21600", off)
	}
	if _, off := time.Date(2021, 7, 1, 12, 0, 0, 0, time.UTC).In(loc).Zone(); off != -5*3600 {
		t.Fatalf("Mexico City in July 2021 (daylight time): offset %d s, want -18000", off)
	}
	if _, err := LoadZone("Mars/Olympus_Mons"); err == nil {
		t.Fatal("an unknown zone resolved")
	}
}
