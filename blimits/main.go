// Command blimits is XCE's LSF-compatible blimits; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("blimits", os.Args[1:])) }
