package grpcapi

// The services' descriptors, and with them those of every file they
// import, are built at start as protoc-gen-go would have them: grpcapi
// links only into the daemons, which start once and would otherwise
// build them on their first call. The commands, which never link it,
// build none (tools/lazypb).
func init() { file_grpcapi_services_proto_init() }
