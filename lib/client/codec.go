package client

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	// The proto codec, registered by its init, is the fallback for a
	// message without generated marshal code.
	_ "google.golang.org/grpc/encoding/proto"
)

// vtMessage is a message with protoc-gen-go-vtproto's generated code
// (lib/api's *_vtproto.pb.go).
type vtMessage interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
	UnmarshalVT([]byte) error
}

// vtCodec encodes and decodes the client's calls with the generated code,
// under the proto codec's name (the same content subtype on the wire). A
// command makes one or two calls: protobuf-go's own coder would first build
// its reflection tables for every message the call touches and parse the
// whole file descriptor, most of a short command's CPU.
type vtCodec struct{}

// codecOption makes a grpc-go connection's calls use vtCodec.
func codecOption() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.ForceCodecV2(vtCodec{}))
}

func (vtCodec) Name() string { return "proto" }

func (vtCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtMessage)
	if !ok {
		return encoding.GetCodecV2("proto").Marshal(v)
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		buf := make([]byte, size)
		if _, err := m.MarshalToSizedBufferVT(buf); err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	if _, err := m.MarshalToSizedBufferVT(*buf); err != nil {
		pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

func (vtCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(vtMessage)
	if !ok {
		return encoding.GetCodecV2("proto").Unmarshal(data, v)
	}
	// The generated code copies strings and bytes out of the buffer, so it
	// may go back to the pool.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return m.UnmarshalVT(buf.ReadOnlyData())
}
