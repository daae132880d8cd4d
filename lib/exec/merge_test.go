package exec

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// TestMergeAsProtoMerge: the shepherd's merge, with the generated code,
// gives what proto.Merge gives: set scalars of src win, repeated fields
// append, maps merge by key.
func TestMergeAsProtoMerge(t *testing.T) {
	dst := func() *api.JobSpec {
		return &api.JobSpec{
			Command: "sleep 1", Queue: "normal", MemLimitKb: 100, Hold: true,
			ResReq: []string{"select[a]"}, Env: []string{"A=1"},
			Origin:     map[string]string{"queue": "cli", "mem": "app"},
			PendLimits: []*api.PendLimit{{Name: "p1", Max: 2}},
		}
	}
	src := &api.JobSpec{
		Queue: "short", RunLimitSec: 60, ResReq: []string{"rusage[mem=1]"},
		Hosts: []string{"h1"}, Interactive: api.Interactive_PTY,
		Origin:     map[string]string{"queue": "queue"},
		PendLimits: []*api.PendLimit{{Name: "p2", Need: 1}},
	}
	want := dst()
	proto.Merge(want, src)
	got := dst()
	merge(got, src)
	if !proto.Equal(got, want) {
		t.Errorf("merge:\n got  %v\n want %v", got, want)
	}
	// CloneVT copies as proto.Clone does, sharing nothing.
	c := want.CloneVT()
	if !proto.Equal(c, want) {
		t.Errorf("CloneVT: %v, want %v", c, want)
	}
	c.ResReq[0] = "changed"
	if want.ResReq[0] == "changed" {
		t.Error("CloneVT shares the repeated field's array")
	}
}
