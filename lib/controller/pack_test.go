package controller

import (
	"strings"
	"testing"

	"xce/lib/api"
)

// A job pack: its jobs submitted in order with consecutive ids, a refused
// one in the middle reported in its place (the rest go on, or with
// stopOnError the pack ends there), a job that depends on an earlier one
// of the pack by name, and MAX_PEND_JOBS counted across the pack; every
// job submitted is in the controller and in the store after a restart.
func TestSubmitPack(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig+`
[users.default]
max_pend_jobs = 6
`, 2, -1)
	specs := []*api.JobSpec{
		{Command: "true", Hold: true, JobName: "first"},
		{Command: "true", Hold: true, Queue: "nosuchqueue"},
		{Command: "true", Hold: true, Dependency: "done(first)"},
		{Command: "true", Hold: true, JobName: "arr", ArraySpec: "[1-2]"},
	}
	res := c.SubmitPack(alice, specs, false)
	if len(res) != len(specs) {
		t.Fatalf("%d results for %d jobs", len(res), len(specs))
	}
	if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "nosuchqueue") {
		t.Errorf("a job to a missing queue: %v", res[1].Err)
	}
	var ids []int64
	for i, r := range res {
		if i == 1 {
			continue
		}
		if r.Err != nil {
			t.Fatalf("job %d of the pack: %v", i, r.Err)
		}
		ids = append(ids, r.Reply.JobId)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Errorf("ids %v are not consecutive in the pack's order", ids)
		}
	}
	if res[3].Reply.ArraySize != 2 {
		t.Errorf("the array's reply: %v", res[3].Reply)
	}
	if st := c.stateOf(ids[1], 0); st != api.JobState_PSUSP {
		t.Errorf("the dependent job: %v", st)
	}

	// With stopOnError the refusal ends the pack; MAX_PEND_JOBS (6, of
	// which 4 are held now) counts the pack's own jobs.
	res = c.SubmitPack(alice, []*api.JobSpec{
		{Command: "true", Hold: true},
		{Command: "true", Hold: true},
		{Command: "true", Hold: true},
		{Command: "true", Hold: true},
	}, true)
	if len(res) != 3 || res[0].Err != nil || res[1].Err != nil || res[2].Err == nil || res[2].Err.Error() != errPendThreshold {
		t.Fatalf("a pack past MAX_PEND_JOBS with stopOnError: %+v", res)
	}
	q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL})
	if len(q.Jobs) != 6 {
		t.Errorf("%d jobs in the controller, want 6", len(q.Jobs))
	}
	if jobs, err := c.store.Load(); err != nil || len(jobs.Jobs) != 6 {
		t.Errorf("the store holds %d jobs (%v), want 6", len(jobs.Jobs), err)
	}
}
