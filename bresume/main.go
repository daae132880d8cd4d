// Command bresume is XCE's LSF-compatible bresume; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bresume", os.Args[1:])) }
