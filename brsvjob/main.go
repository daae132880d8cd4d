// Command brsvjob is XCE's LSF-compatible brsvjob; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("brsvjob", os.Args[1:])) }
