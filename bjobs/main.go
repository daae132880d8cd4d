// Command bjobs is XCE's LSF-compatible bjobs; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bjobs", os.Args[1:])) }
