// Package rpc owns the messages of XCE's gRPC services (the Controller's
// requests and replies, the Cluster and Tasks streams' messages) and their
// generated code (`make proto` regenerates it). The services themselves
// are in lib/api/grpcapi: this package links no grpc-go, so that a program
// that only reads and writes the messages (the shepherd, the commands)
// starts without grpc-go's init and size.
package rpc
