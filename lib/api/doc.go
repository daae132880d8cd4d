// Package api owns XCE's wire and storage types: the protobuf messages in
// api.proto (jobs, specs, events, hosts, queues). The Controller gRPC
// service over them is in lib/api/rpc. The generated code is committed;
// `make proto` regenerates it.
package api

//go:generate buf generate
