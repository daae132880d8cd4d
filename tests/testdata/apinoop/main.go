// Command apinoop does nothing, linked with what every XCE command needs to
// reach the controller (grpc and XCE's API): BenchmarkCommandStart's floor
// for a command's process start, beside the bare do-nothing binary.
package main

import (
	_ "google.golang.org/grpc"

	_ "xce/lib/api/rpc"
)

func main() {}
