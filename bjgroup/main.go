// Command bjgroup is XCE's LSF-compatible bjgroup; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bjgroup", os.Args[1:])) }
