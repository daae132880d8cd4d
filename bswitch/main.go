// Command bswitch is XCE's LSF-compatible bswitch; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bswitch", os.Args[1:])) }
