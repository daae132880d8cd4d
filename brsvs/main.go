// Command brsvs is XCE's LSF-compatible brsvs; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("brsvs", os.Args[1:])) }
