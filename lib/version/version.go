// Package version owns XCE's release and the source revision a binary was
// built from: what -V, xced --version, lsid and the xce_build_info metric
// print. The release is set at build time (the Makefile and the tests'
// build pass -ldflags "-X xce/lib/version.release=..."), the revision
// likewise or, failing that, from the VCS stamp Go records in the binary.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Set by the linker (-X); the defaults are what a plain `go build` gives.
var (
	release  = "0.1.0"
	revision = ""
)

// Product is the name every banner starts with.
const Product = "XCE"

// Release is XCE's release number ("0.1.0").
func Release() string { return release }

// Revision is the source revision (a git commit, shortened to 12
// characters; "+dirty" when the tree had changes), or "unknown".
func Revision() string { return rev() }

var rev = sync.OnceValue(func() string {
	if revision != "" {
		return revision
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var r string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			r = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if r == "" {
		return "unknown"
	}
	if len(r) > 12 {
		r = r[:12]
	}
	if dirty {
		r += "+dirty"
	}
	return r
})

// Short is "XCE 0.1.0": what the controller reports in lsid's banner and
// a worker registers with.
func Short() string { return Product + " " + release }

// Banner is the -V line, LSF's shape ("IBM Spectrum LSF 10.1.0.0, Jan 5
// 2016" there): the product and release, then the revision and the Go
// version it was built with.
func Banner() string {
	return fmt.Sprintf("%s %s, revision %s, %s, LSF-compatible batch system\n", Product, release, Revision(), runtime.Version())
}
