package client

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// The generated codec reads what protobuf-go writes and writes what it
// reads, for messages with scalars, repeated fields, maps and nested
// messages, large ones (pooled buffers) too.
func TestVTCodecMatchesProto(t *testing.T) {
	spec := &api.JobSpec{
		Command: "sleep 10", Queue: "normal", JobName: "j", MinTasks: 2, MaxTasks: 4,
		ResReq: []string{"rusage[mem=100]", "span[hosts=1]"}, RunLimitSec: 3600, Hold: true,
		Origin: map[string]string{"LSB_X": "1", "PATH": "/bin"},
	}
	big := proto.Clone(spec).(*api.JobSpec)
	big.Command = string(make([]byte, 64<<10))
	msgs := []proto.Message{
		spec, big,
		&api.SubmitRequest{Spec: spec},
		&api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all", Refs: []*api.JobRef{{JobId: 1}, {JobId: 2, ArrayIndex: 3}}},
		&api.Job{JobId: 7, State: api.JobState_PEND, Spec: spec, PendReason: "held"},
	}
	var c vtCodec
	for _, m := range msgs {
		data, err := c.Marshal(m)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		got := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(data.Materialize(), got); err != nil {
			t.Fatalf("%T: protobuf-go cannot read the codec's encoding: %v", m, err)
		}
		if !proto.Equal(got, m) {
			t.Errorf("%T: codec wrote %v, want %v", m, got, m)
		}
		want, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back := m.ProtoReflect().New().Interface()
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(want)}, back); err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !proto.Equal(back, m) {
			t.Errorf("%T: codec read %v, want %v", m, back, m)
		}
	}
}
