// Command bacct is XCE's LSF-compatible bacct; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bacct", os.Args[1:])) }
