package lsfout

import (
	"bytes"
	"testing"
	"time"

	"xce/lib/api"
)

func TestShowStatusGolden(t *testing.T) {
	hosts := []*api.Host{
		{Name: "hostA", State: api.HostState_HOST_OK, Ncpus: 16, MaxSlots: 16},
		{Name: "hostB", State: api.HostState_HOST_CLOSED, Ncpus: 8, MaxSlots: 8},
		{Name: "hostC", State: api.HostState_HOST_UNAVAIL, Ncpus: 4, MaxSlots: 4},
	}
	job := func(id int64, user string, st api.JobState) *api.Job {
		return &api.Job{JobId: id, State: st, Effective: &api.JobSpec{User: user}}
	}
	jobs := []*api.Job{
		job(1, "alice", api.JobState_RUN), job(2, "alice", api.JobState_PEND), job(3, "bob", api.JobState_PSUSP),
		job(4, "bob", api.JobState_USUSP), job(5, "carol", api.JobState_DONE), job(6, "carol", api.JobState_EXIT),
	}
	info := &api.ClusterInfo{Started: time.Date(2026, 10, 5, 9, 58, 1, 0, testZone).UnixNano(), Pid: 4321,
		UserGroups: []*api.Group{{Name: "eng", Members: []string{"alice", "bob"}}}}
	var b bytes.Buffer
	if err := WriteShowStatus(&b, hosts, jobs, info, testZone); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "showstatus", b.String())
}

// With controller candidates, showstatus ends with each candidate's
// state, and lsid adds a line after LSF's two.
func TestCandidatesGolden(t *testing.T) {
	info := &api.ClusterInfo{ClusterName: "xce", MasterHost: "hostA", Started: time.Date(2026, 10, 5, 9, 58, 1, 0, testZone).UnixNano(), Pid: 4321,
		Candidates: []*api.Candidate{
			{Address: "hostA:7000", State: "leader", Voter: true},
			{Address: "hostB:7000", State: "follower", Voter: true},
			{Address: "hostC:7000", State: "unreachable", Voter: true, LastContact: time.Date(2026, 10, 5, 10, 0, 7, 0, testZone).UnixNano()},
		}}
	var b bytes.Buffer
	if err := WriteShowStatus(&b, nil, nil, info, testZone); err != nil {
		t.Fatal(err)
	}
	if err := WriteClusterID(&b, "XCE 0.1, LSF-compatible batch system\n", info); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "candidates", b.String())
}
