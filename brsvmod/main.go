// Command brsvmod is XCE's LSF-compatible brsvmod; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("brsvmod", os.Args[1:])) }
