// Command bgmod is XCE's LSF-compatible bgmod; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bgmod", os.Args[1:])) }
