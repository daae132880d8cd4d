// Command bmgroup is XCE's LSF-compatible bmgroup; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bmgroup", os.Args[1:])) }
