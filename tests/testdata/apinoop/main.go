// Command apinoop does nothing, linked with what every XCE command needs to
// reach the controller (grpc and XCE's API): BenchmarkCommandStart's floor
// for a command's process start, beside the bare do-nothing binary.
package main

import (
	_ "google.golang.org/grpc"

	// grpcapi: the services, which link grpc and the messages (lib/api,
	// lib/api/rpc) both.
	_ "xce/lib/api/grpcapi"
)

func main() {}
