// Command lshosts is XCE's LSF-compatible lshosts; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("lshosts", os.Args[1:])) }
