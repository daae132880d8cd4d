// Command bmod is XCE's LSF-compatible bmod; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bmod", os.Args[1:])) }
