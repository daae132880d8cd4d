// Command btop is XCE's LSF-compatible btop; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("btop", os.Args[1:])) }
