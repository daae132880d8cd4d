// Command bpeek is XCE's LSF-compatible bpeek; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bpeek", os.Args[1:])) }
