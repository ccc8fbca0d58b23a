package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The Python package and the command are one release: the wheel ships both, and
// `shmloader --version` must name the version `shmloader.__version__` reports.
func TestVersionMatchesPython(t *testing.T) {
	const path = "../../bindings/python/shmloader/__init__.py"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^__version__\s*=\s*["']([^"']+)["']\s*$`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: no __version__ = \"...\" line", path)
	}
	if got := string(m[1]); got != Version {
		t.Errorf("%s: __version__ = %q, cmd/shmloader Version = %q", path, got, Version)
	}
}

func TestCABIVersionMatchesHeader(t *testing.T) {
	const path = "../../bindings/c/shmloader.h"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define SHML_ABI_VERSION (\d+)\b`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: no #define SHML_ABI_VERSION", path)
	}
	if got, _ := strconv.Atoi(string(m[1])); got != cABIVersion {
		t.Errorf("%s: SHML_ABI_VERSION %d, cmd/shmloader cABIVersion %d", path, got, cABIVersion)
	}
}

func TestVersionLine(t *testing.T) {
	want := regexp.MustCompile(`^shmloader \d+\.\d+\.\d+\S* \(ring protocol \d+, C ABI \d+, plan \d+, cache format \d+, tzdata \d{4}[a-z]\)$`)
	if got := versionLine(); !want.MatchString(got) {
		t.Errorf("versionLine() = %q, want the form %s", got, want)
	}
}
