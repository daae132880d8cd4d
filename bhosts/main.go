// Command bhosts is XCE's LSF-compatible bhosts; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bhosts", os.Args[1:])) }
