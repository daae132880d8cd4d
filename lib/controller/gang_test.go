package controller

import (
	"errors"
	"strings"
	"testing"

	"xce/lib/api"
	"xce/lib/store"
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

// A member whose start is reported in the same cycle as its gang mate's
// failure (-gang_fail kill): its start keeps its event, and the kill is
// recorded after it with the reason, as when the start came first.
func TestGangFailureBesideStart(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig, 3, -1)
	if r := c.JobGroups(Caller{}, &api.JobGroupRequest{Op: api.JobGroupRequest_ADD, Path: "/k", GangSet: true, Gang: 2, GangFail: gangKill}); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	var ids []int64
	for range 2 {
		r, err := c.Submit(alice, &api.JobSpec{Command: "x", JobGroup: "/k"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.JobId)
	}
	waitFor(t, "the gang running", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.jobs[key{ids[0], 0}].job.State == api.JobState_RUN && c.jobs[key{ids[1], 0}].job.State == api.JobState_RUN
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	ok, bad := c.clone(c.jobs[key{ids[0], 0}]), c.clone(c.jobs[key{ids[1], 0}])
	ok.Pid = 4242
	bad.State, bad.Pid = api.JobState_EXIT, 0 // ended before it started
	startEv := c.event(ok, api.EventType_START, "", "")
	changes := []store.Change{{Job: ok, Event: startEv}, {Job: bad, Event: c.event(bad, api.EventType_FINISH, "", "")}}
	more, acts := c.gangFailures(changes)
	if changes[0].Event != startEv {
		t.Errorf("the member's start event became %v", changes[0].Event)
	}
	var signal *store.Change
	for i := range more {
		if more[i].Job.JobId == ids[0] {
			signal = &more[i]
		}
	}
	switch {
	case signal == nil:
		t.Fatalf("no change records the kill of the started member: %v", more)
	case signal.Event.GetType() != api.EventType_SIGNAL || !strings.Contains(signal.Event.GetDetail(), "failed to start"):
		t.Errorf("the kill's event: %v", signal.Event)
	case signal.Job.Seq <= ok.Seq || signal.Job.TermReason != api.TermReason_TERM_OTHER || signal.Job.Pid != 4242:
		t.Errorf("the kill's job record: seq %d after %d, reason %v, pid %d", signal.Job.Seq, ok.Seq, signal.Job.TermReason, signal.Job.Pid)
	}
	if len(acts) != 1 || acts[0].id != ids[0] {
		t.Errorf("terminations: %+v", acts)
	}
}
