// Command bclaim creates, lists and deletes XCE's standalone claims; see lib/cli.
package main

import (
	"os"

	"xce/lib/cli"
)

func main() { os.Exit(cli.Main("bclaim", os.Args[1:])) }
