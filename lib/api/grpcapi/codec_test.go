package grpcapi

import (
	"strings"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

func TestCodec(t *testing.T) {
	c, ok := encoding.GetCodecV2("proto").(codec)
	if !ok {
		t.Fatalf("the registered proto codec is %T, not this package's", encoding.GetCodecV2("proto"))
	}
	spec := &api.JobSpec{Command: "sleep 10", Queue: "normal", ResReq: []string{"span[hosts=1]"}, Origin: map[string]string{"A": "1"}}
	big := proto.Clone(spec).(*api.JobSpec)
	big.Command = strings.Repeat("x", 64<<10) // a pooled buffer
	for _, m := range []proto.Message{spec, big, &api.QueryReplyEncoded{Jobs: []*api.Job{{JobId: 3}}, Effective: []*api.EncodedSpec{{Key: 3, Value: []byte{1, 2}}}}} {
		data, err := c.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := m.ProtoReflect().New().Interface()
		if err := c.Unmarshal(data, got); err != nil || !proto.Equal(got, m) {
			t.Errorf("%T: read back %v (%v), want %v", m, got, err, m)
		}
		data.Free()
	}
	// Decoding is protobuf-go's, which refuses a string that is not UTF-8.
	bad, err := proto.Marshal(&api.JobSpec{Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	bad[len(bad)-1] = 0xff
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(bad)}, &api.JobSpec{}); err == nil {
		t.Error("a command that is not UTF-8 was decoded")
	}
}
