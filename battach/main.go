// Command battach is XCE's LSF-compatible battach; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("battach", os.Args[1:])) }
