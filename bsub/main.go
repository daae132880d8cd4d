// Command bsub is XCE's LSF-compatible bsub; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bsub", os.Args[1:])) }
