// Package grpcapi owns XCE's gRPC services (Controller, Cluster, Tasks):
// their generated client and server code (`make proto` regenerates it from
// services.proto) and the NotLeader status of a standby controller. Their
// messages are in lib/api and lib/api/rpc, which link no grpc-go, so that
// a program that only needs the messages does not pay for grpc-go.
package grpcapi
