// Command bstop is XCE's LSF-compatible bstop; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bstop", os.Args[1:])) }
