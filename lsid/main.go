// Command lsid is XCE's LSF-compatible lsid; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("lsid", os.Args[1:])) }
