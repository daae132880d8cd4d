// Command bqueues is XCE's LSF-compatible bqueues; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bqueues", os.Args[1:])) }
