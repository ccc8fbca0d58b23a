package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/shmloader/shmloader/cache"
	"github.com/shmloader/shmloader/producer/config"
	"github.com/shmloader/shmloader/producer/plan"
	"github.com/shmloader/shmloader/ring"
)

// Version is shmloader's release. bindings/python/shmloader/__init__.py's __version__ is
// the same string (TestVersionMatchesPython), so the wheel's command and package agree.
const Version = "0.1.0"

// cABIVersion mirrors SHML_ABI_VERSION of bindings/c/shmloader.h, the C library this
// release ships (TestCABIVersionMatchesHeader); the command itself does not link it.
const cABIVersion = 5

// versionLine is what `shmloader --version` prints: the release and the version of each
// format a peer must agree on.
func versionLine() string {
	return fmt.Sprintf("shmloader %s (ring protocol %d, C ABI %d, plan %d, cache format %d, tzdata %s)",
		Version, ring.Version, cABIVersion, plan.Version, cache.FormatVersion, config.TZDataRelease)
}

// runVersion is `shmloader version` (also spelled --version and -version): the version
// line on stdout.
func runVersion(args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (isHelp(args[0]) || args[0] == "help") {
		fmt.Fprintln(stdout, "usage: shmloader version (or --version)\n\nPrints the release and the version of each format a peer must agree on.")
		return flag.ErrHelp
	}
	if len(args) > 0 {
		return usageErrorf("takes no arguments, got %q", args)
	}
	_, err := fmt.Fprintln(stdout, versionLine())
	return err
}
