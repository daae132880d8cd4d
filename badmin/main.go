// Command badmin is XCE's LSF-compatible badmin; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("badmin", os.Args[1:])) }
