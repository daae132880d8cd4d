// Command bgadd is XCE's LSF-compatible bgadd; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bgadd", os.Args[1:])) }
