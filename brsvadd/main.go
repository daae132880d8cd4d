// Command brsvadd is XCE's LSF-compatible brsvadd; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("brsvadd", os.Args[1:])) }
