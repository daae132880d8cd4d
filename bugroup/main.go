// Command bugroup is XCE's LSF-compatible bugroup; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bugroup", os.Args[1:])) }
