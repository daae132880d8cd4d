// Command busers is XCE's LSF-compatible busers; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("busers", os.Args[1:])) }
