package controller

import (
	"maps"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/sched"
)

// TestSharedUsedUnchanged: what the provisioners are told running jobs
// hold of the shared resources that borrow, computed from the running
// jobs alone, is what the whole scheduler view counts: per-job and
// per-task amounts, jobs on several slots, a resource that does not
// borrow left out.
func TestSharedUsedUnchanged(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig+`
[providers.p]
kind = "local"

[resources.lic_x]
total = 4
provider = "p"
borrow_max = 2

[resources.lic_y]
total = 6
provider = "p"
borrow_max = 2

[resources.lic_z]
total = 2
`, 8, -1)
	var ids []int64
	for _, spec := range []*api.JobSpec{
		{Command: "a", ResReq: []string{"rusage[lic_x=2]"}},
		{Command: "b", MinTasks: 2, MaxTasks: 2, ResReq: []string{"rusage[lic_y=1/task:lic_z=1]"}},
		{Command: "c", ResReq: []string{"rusage[lic_x=1:lic_y=2]"}},
	} {
		j, err := c.Submit(alice, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobId)
	}
	for _, id := range ids {
		waitFor(t, "the jobs running", func() bool { return c.stateOf(id, 0) == api.JobState_RUN })
	}
	got := c.SharedUsed()
	c.mu.Lock()
	view := sched.Look(c.snapshot(time.Now(), nil)).SharedReserved
	c.mu.Unlock()
	want := map[string]float64{"lic_x": view["lic_x"], "lic_y": view["lic_y"]}
	if !maps.Equal(got, want) || got["lic_x"] != 3 || got["lic_y"] != 4 {
		t.Errorf("SharedUsed %v, the view's %v (want lic_x 3, lic_y 4)", got, want)
	}
	var inCheck map[string]float64
	c.WithSharedUsed(func(u map[string]float64) error { inCheck = u; return nil })
	if !maps.Equal(inCheck, got) {
		t.Errorf("WithSharedUsed %v, SharedUsed %v", inCheck, got)
	}
}
