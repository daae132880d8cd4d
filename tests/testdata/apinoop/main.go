// Command apinoop does nothing, linked with what every XCE command needs to
// reach the controller (lib/client: XCE's API messages and its own gRPC
// client, HTTP/2 and TLS): BenchmarkCommandStart's floor for a command's
// process start, beside the bare do-nothing binary.
package main

import _ "xce/lib/client"

func main() {}
