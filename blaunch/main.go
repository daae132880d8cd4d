// Command blaunch is XCE's LSF-compatible blaunch; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("blaunch", os.Args[1:])) }
