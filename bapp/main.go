// Command bapp is XCE's LSF-compatible bapp; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bapp", os.Args[1:])) }
