// Command bbot is XCE's LSF-compatible bbot; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bbot", os.Args[1:])) }
