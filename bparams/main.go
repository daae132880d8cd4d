// Command bparams is XCE's LSF-compatible bparams; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bparams", os.Args[1:])) }
