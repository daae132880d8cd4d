// Command blaunch is XCE's LSF-compatible blaunch; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
	"xce/lib/exec"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == exec.DriverArg {
		// A container job's exec_driver starter, run by the worker as
		// the driver's user (lib/exec's driver.go).
		os.Exit(cli.DriverStart(os.Args[2:]))
	}
	os.Exit(cli.Main("blaunch", os.Args[1:]))
}
