// Command bwait is XCE's LSF-compatible bwait; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bwait", os.Args[1:])) }
