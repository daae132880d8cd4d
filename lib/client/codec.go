package client

// vtMessage is a message with protoc-gen-go-vtproto's generated code
// (lib/api's *_vtproto.pb.go), which the client's calls are encoded and
// decoded with. A command makes one or two calls: protobuf-go's own coder
// would first build its reflection tables for every message the call
// touches and parse the whole file descriptor, most of a short command's
// CPU.
type vtMessage interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
	UnmarshalVT([]byte) error
}
