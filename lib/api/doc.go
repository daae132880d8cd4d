// Package api owns XCE's wire and storage types: the protobuf messages in
// api.proto (jobs, specs, events, hosts, queues). The RPC messages are in
// lib/api/rpc and the gRPC services over them in lib/api/grpcapi; this
// package and rpc link no grpc-go. The generated code is committed; `make
// proto` regenerates it.
package api

//go:generate buf generate
