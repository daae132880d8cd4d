// Package rpc owns the Controller gRPC service of lib/api's messages: the
// generated client and server code (`make proto` regenerates it).
package rpc
