// Command xcetop is the live cluster dashboard; see lib/top.
package main

import (
	"os"

	"xce/lib/top/live"
)

func main() { os.Exit(live.Main(os.Args[1:])) }
