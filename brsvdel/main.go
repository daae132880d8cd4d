// Command brsvdel is XCE's LSF-compatible brsvdel; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("brsvdel", os.Args[1:])) }
