// Command xce-dial connects a command to a remote controller candidate:
// TCP, TLS and the user's proof, then it relays the session over its
// standard input and output (lib/tlsdial says why and how). Commands run
// it; it is not for use by hand.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"xce/lib/clusterauth/handshake"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: xce-dial HOST:PORT TIMEOUT (run by XCE's commands, not by hand)")
		os.Exit(2)
	}
	timeout, err := time.ParseDuration(os.Args[2])
	if err != nil || timeout <= 0 {
		fmt.Fprintf(os.Stderr, "xce-dial: bad timeout %q\n", os.Args[2])
		os.Exit(2)
	}
	if err := handshake.ServeDial(context.Background(), os.Args[1], timeout, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "xce-dial:", err)
		os.Exit(1)
	}
}
