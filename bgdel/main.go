// Command bgdel is XCE's LSF-compatible bgdel; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bgdel", os.Args[1:])) }
