// Command bkill is XCE's LSF-compatible bkill; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bkill", os.Args[1:])) }
