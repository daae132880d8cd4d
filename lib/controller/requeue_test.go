package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// A job whose exit code is in its requeue exit values goes back to pending
// and runs again; back in the pending list before the list dropped it, it
// must not be dispatched twice (a regression: a requeued or pre-exec-failed
// job was launched twice at once).
func TestRequeueExitValuesRunOnce(t *testing.T) {
	c, fx := newTestControllerWith(t, testConfig, 2, 4)
	r, err := c.Submit(alice, &api.JobSpec{Command: "x", RequeueExitValues: "4"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "five runs", func() bool {
		fx.mu.Lock()
		defer fx.mu.Unlock()
		return fx.starts >= 5
	})
	if s := c.stateOf(r.JobId, 0); s == api.JobState_EXIT || s == api.JobState_DONE {
		t.Fatalf("the job ended (%v) instead of being requeued", s)
	}
	fx.mu.Lock()
	doubles := fx.doubles
	fx.mu.Unlock()
	if doubles != 0 {
		t.Fatalf("%d launches of a job that was running already", doubles)
	}
	// Without the values the same exit ends the job.
	r2, err := c.Submit(alice, &api.JobSpec{Command: "y"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the plain job's end", func() bool { return c.stateOf(r2.JobId, 0) == api.JobState_EXIT })
}

// A job whose dependency can never be met is ended as an orphan: at once
// with -ti, after the cluster's grace period otherwise (never without
// one).
func TestOrphanTermination(t *testing.T) {
	c, fx := newTestControllerWith(t, testConfig, 2, 1) // no grace period
	parent, err := c.Submit(alice, &api.JobSpec{Command: "fails"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the parent's exit", func() bool { return c.stateOf(parent.JobId, 0) == api.JobState_EXIT })
	dep := fmt.Sprintf("done(%d)", parent.JobId)
	ti, err := c.Submit(alice, &api.JobSpec{Command: "child", Dependency: dep, TerminateOrphan: true})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.Submit(alice, &api.JobSpec{Command: "child2", Dependency: dep})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the -ti orphan's end", func() bool { return c.stateOf(ti.JobId, 0) == api.JobState_EXIT })
	j := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: ti.JobId}}, Scope: api.QueryRequest_ALL}).Jobs[0]
	if j.TermReason != api.TermReason_TERM_ORPHAN_SYSTEM || !j.TermReasonSet || j.StartTime != 0 {
		t.Errorf("orphan: %v", j)
	}
	c.Kick()
	time.Sleep(50 * time.Millisecond) // a few cycles (the test asserts no end, not a duration)
	if s := c.stateOf(kept.JobId, 0); s != api.JobState_PEND {
		t.Errorf("without -ti or a grace period the orphan is %v, want PEND", s)
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if fx.starts != 1 {
		t.Errorf("%d launches, want the parent's only", fx.starts)
	}
}

// With orphan_job_term_grace_period, every orphan is ended after it.
func TestOrphanGracePeriod(t *testing.T) {
	conf := strings.Replace(testConfig, "[cluster]\n", "[cluster]\norphan_job_term_grace_period = \"1s\"\n", 1)
	c, _ := newTestControllerWith(t, conf, 2, 1)
	parent, _ := c.Submit(alice, &api.JobSpec{Command: "fails"})
	waitFor(t, "the parent's exit", func() bool { return c.stateOf(parent.JobId, 0) == api.JobState_EXIT })
	child, err := c.Submit(alice, &api.JobSpec{Command: "child", Dependency: fmt.Sprintf("done(%d)", parent.JobId)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphan's end", func() bool { return c.stateOf(child.JobId, 0) == api.JobState_EXIT })
}
