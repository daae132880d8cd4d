// Command bhist is XCE's LSF-compatible bhist; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bhist", os.Args[1:])) }
