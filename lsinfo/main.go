// Command lsinfo is XCE's LSF-compatible lsinfo; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("lsinfo", os.Args[1:])) }
