// Command lsadmin is XCE's LSF-compatible lsadmin; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("lsadmin", os.Args[1:])) }
