package controller

import "xce/lib/api/rpc"

// taskContainer fills in ts the job's CONTAINER value, from its
// effective spec: a task on a host other than the job's first runs in a
// container of the same image there (lib/worker's containerhost.go).
func (c *Controller) taskContainer(ts *rpc.TaskStart) {
	c.mu.Lock()
	r := c.jobs[key{ts.JobId, ts.Index}]
	var eff *effSpec
	if r != nil {
		eff = r.eff
	}
	c.mu.Unlock()
	if eff == nil {
		return
	}
	if spec, err := eff.Spec(); err == nil {
		ts.Container = spec.GetContainer()
	}
}
