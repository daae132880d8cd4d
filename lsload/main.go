// Command lsload is XCE's LSF-compatible lsload; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("lsload", os.Args[1:])) }
