package controller

import (
	"testing"

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
