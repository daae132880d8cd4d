package controller

import "xce/lib/config"

// The running jobs, apart from the rest: a scheduling cycle reads them
// (the snapshot's allocations, the limits in use), and a controller that
// holds a day's finished jobs must not walk all of them at every cycle.

// trackRunning keeps c.running in step with a record whose state was was
// and is now r.job's (c.mu held). A new record passes was as its own
// state.
func (c *Controller) trackRunning(r *rec, was bool) {
	now := isRunning(r.job.State)
	switch {
	case now && !was:
		if c.running == nil {
			c.running = map[key]*rec{}
		}
		c.running[key{r.job.JobId, r.job.ArrayIndex}] = r
	case was && !now:
		delete(c.running, key{r.job.JobId, r.job.ArrayIndex})
	}
}

// anyFairshare reports whether a queue shares by fairshare: only then do
// the finished jobs' usages count in a cycle.
func anyFairshare(conf *config.Config) bool {
	for _, q := range conf.Queues {
		if len(q.Fairshare) > 0 {
			return true
		}
	}
	return false
}
