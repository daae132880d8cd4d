// Command brequeue is XCE's LSF-compatible brequeue; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("brequeue", os.Args[1:])) }
