package controller

import (
	"slices"

	"xce/lib/api"
	"xce/lib/store"
)

// One synced write per scheduling cycle. A cycle's reports (jobs that
// started and ended) free the slots its placement hands out, so they
// apply in memory first (applyAhead); the store then takes them together
// with the cycle's dispatches in one commit (commitWith): one fsync where
// there were two, on the path from one short job's end to the next one's
// start. Nothing is launched, acknowledged or told to watchers before
// that commit; should it fail, the reports are undone in memory and tried
// again.

// applyAhead applies report changes to the records in memory ahead of
// their write (c.mu held), without telling watchers, and returns what
// undoes them.
func (c *Controller) applyAhead(changes []store.Change) (undo func()) {
	if len(changes) == 0 {
		return func() {}
	}
	type prior struct {
		r   *rec
		job *api.Job
		why string
	}
	olds := make([]prior, len(changes))
	for i, ch := range changes {
		r := c.jobs[key{ch.Job.JobId, ch.Job.ArrayIndex}]
		olds[i] = prior{r, r.job, r.why}
		c.applied(changes[i:i+1], false)
	}
	return func() {
		for i := len(olds) - 1; i >= 0; i-- {
			o := olds[i]
			cur := o.r.job
			o.r.job, o.r.why = o.job, o.why
			c.trackRunning(o.r, isRunning(cur.State))
			c.stats.count(cur, o.r.eff, -1)
			c.stats.count(o.job, o.r.eff, 1)
			if isFinished(cur.State) && !isFinished(o.job.State) {
				c.stats.finished[finishedIndex(cur.State)].Add(-1)
			}
			if isRunning(o.job.State) && !isRunning(cur.State) {
				c.takeSlots(o.job, o.r.eff.GetExclusive(), 1)
			}
			// A report that sent the job back to pending queued it: it is
			// running again, which the pending list drops lazily.
		}
	}
}

// commitWith writes the changes applyAhead applied and further changes
// in one commit, then applies the latter and tells the watchers about
// both (c.mu held). On a failed write nothing of changes is applied; the
// caller undoes ahead.
func (c *Controller) commitWith(ahead, changes []store.Change) error {
	if len(ahead) == 0 {
		return c.commit(changes)
	}
	c.acctRequeued(changes)
	if err := c.store.Apply(append(slices.Clip(ahead), changes...)); err != nil {
		return err
	}
	for _, ch := range ahead {
		for w := range c.watchers {
			if w.wants(ch.Job) {
				c.send(w, ch.Job)
			}
		}
	}
	c.applied(changes, true)
	return nil
}
