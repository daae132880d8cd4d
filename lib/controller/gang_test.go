package controller

import (
	"errors"
	"testing"

	"xce/lib/api"
	"xce/lib/worker"
)

// A gang's members start in one cycle with one gang name; when one of
// them fails at start (its host could not start it), the other is
// requeued with it (the default -gang_fail), and neither runs alone.
func TestGangStartFailureRequeues(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig, 3, -1)
	if r := c.JobGroups(Caller{}, &api.JobGroupRequest{Op: api.JobGroupRequest_ADD, Path: "/g", GangSet: true, Gang: 2}); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	var ids []int64
	for range 2 {
		r, err := c.Submit(alice, &api.JobSpec{Command: "x", JobGroup: "/g"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.JobId)
	}
	job := func(id int64) *api.Job {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.jobs[key{id, 0}].job
	}
	waitFor(t, "the gang running", func() bool {
		return job(ids[0]).State == api.JobState_RUN && job(ids[1]).State == api.JobState_RUN
	})
	a, b := job(ids[0]), job(ids[1])
	if a.Gang == "" || a.Gang != b.Gang || a.StartTime != b.StartTime {
		t.Fatalf("gang %q and %q, started %d and %d", a.Gang, b.Gang, a.StartTime, b.StartTime)
	}
	c.Report(worker.Report{JobID: ids[0], Err: errors.New("no space left on device")})
	waitFor(t, "both members pending", func() bool {
		return job(ids[0]).State == api.JobState_PEND && job(ids[1]).State == api.JobState_PEND
	})
}
