package controller

// The end of a closed reservation's window, whatever happened to the
// job's host meanwhile. The job was launched with the window's end as its
// termination deadline, which its shepherd enforces (warning action, then
// the kill) and the worker backs up; both must know the current end:
//
//   - A worker that comes back (restarted, or reconnected after a
//     partition) is sent every running job's limits, a reservation job's
//     with the deadline the reservation sets now, after it adopts them
//     (rejoinLimits): a bmod, brsvmod -e or -o/-on made while it was away
//     is not lost, and a restarted worker arms its own backstop with
//     them.
//   - The controller ends, as LSF's mbatchd does, a closed reservation's
//     job still running a grace period after its window closed (the
//     shepherd's warning and kill had their time): TERM_DEADLINE, sent
//     now or, while its host is away, when it returns. A one-time
//     reservation is removed only once it has no such job left.

import (
	"log/slog"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/policy"
	"xce/lib/store"
)

// rsvEndGrace is how long after a closed window's end the controller
// waits for a job's own deadline to end it: the shepherd's warning to
// kill interval and the worker's backstop, with room to report.
func (c *Controller) rsvEndGrace() time.Duration {
	return c.cfg.KillGrace + 5*time.Second
}

// rsvJobEnd is when a closed reservation's running job must end: the end
// of the window it started in (as the window is now); zero when it has
// none (an open reservation's, or one started outside a window).
func rsvJobEnd(r *api.Reservation, start time.Time) time.Time {
	if r == nil || r.Open || r.Type == "sys" {
		return time.Time{}
	}
	ws := policy.RsvWindows(r, start, policy.RsvHorizon)
	if len(ws) == 0 || start.Before(ws[0].Start.Add(-time.Minute)) {
		return time.Time{}
	}
	return ws[0].End
}

// runningLimits is a running job's limits as they are now: its effective
// spec (run limit, -t deadline and the other limits, bmod's changes
// included) with the termination deadline its reservation sets now, if
// it is a closed reservation's job (nil: the spec cannot be read) (c.mu
// held).
func (c *Controller) runningLimits(rc *rec) *api.JobSpec {
	spec, err := rc.eff.Spec()
	if err != nil {
		slog.Warn("decode a running job's effective spec", "job", rc.job.JobId, "err", err)
		return nil
	}
	r := c.rsvs[rc.eff.GetReservation()]
	if end := rsvJobEnd(r, time.Unix(0, rc.job.StartTime)); !end.IsZero() && (spec.TermTime == 0 || end.Unix() < spec.TermTime) {
		spec.TermTime = end.Unix()
	}
	return spec
}

// rejoinLimits sends a job's limits to the worker that has just adopted
// it again (c.mu held; after the adoption, on the same stream): the
// adoption carries no spec, so a restarted worker has no backstop for the
// job's run limit or deadline until it has them, and a worker that was
// away missed what changed meanwhile. Every running job's, whether of a
// reservation or not; a remote worker's return and the embedded worker's
// restart both come here.
func (c *Controller) rejoinLimits(ex Executor, rc *rec) {
	if spec := c.runningLimits(rc); spec != nil {
		if err := ex.SetLimits(rc.job.JobId, rc.job.ArrayIndex, spec); err != nil {
			slog.Warn("cannot give a returning worker a job's limits", "job", rc.job.JobId, "index", rc.job.ArrayIndex, "err", err)
		}
	}
}

// rsvOverdue ends the closed reservations' jobs still running a grace
// period after their window's end (c.mu held), and reports the one-time
// reservations that still have such jobs (kept until they end).
func (c *Controller) rsvOverdue(now time.Time) map[string]bool {
	if len(c.rsvs) == 0 {
		return nil
	}
	var keep map[string]bool
	var changes []store.Change
	var ends []*rec
	for _, rc := range c.running {
		r := c.rsvs[rc.eff.GetReservation()]
		if r == nil || r.Open {
			continue
		}
		end := rsvJobEnd(r, time.Unix(0, rc.job.StartTime))
		if end.IsZero() || now.Before(end) {
			continue
		}
		if keep == nil {
			keep = map[string]bool{}
		}
		keep[r.Id] = true
		if now.Before(end.Add(c.rsvEndGrace())) || rc.job.TermReasonSet {
			continue // its deadline's turn, or ended already
		}
		nj := c.clone(rc)
		nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_DEADLINE, true
		ev := c.event(nj, api.EventType_SIGNAL, "", "KILL; the advance reservation <"+r.Id+">'s window closed")
		ev.Signal = int32(syscall.SIGKILL)
		changes = append(changes, store.Change{Job: nj, Event: ev})
		ends = append(ends, rc)
	}
	if len(changes) == 0 {
		return keep
	}
	if err := c.commit(changes); err != nil {
		slog.Warn("record the end of reservation jobs past their window", "err", err)
		return keep
	}
	for _, rc := range ends {
		slog.Warn("a closed reservation's job outlived its window: the controller ends it", "job", rc.job.JobId, "index", rc.job.ArrayIndex)
		c.execOf(rc.job).Terminate(rc.job.JobId, rc.job.ArrayIndex, api.TermReason_TERM_DEADLINE)
	}
	return keep
}
