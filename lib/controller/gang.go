package controller

// Gang groups (bgadd -gang N): lib/sched places a gang group's pending
// jobs N at a time, all in one cycle or none (its gang.go); here the
// controller dispatches a gang's placements together or drops them all,
// records the gang each member started with (Job.gang), and keeps the
// members together afterwards.
//
// When a member fails at start — it goes back to pending (its host did
// not start it, a start error, a pre-exec failure, a requeue) or ends EXIT
// before its start was reported — or its host fails (the host failure
// timeout requeues or ends it), the gang's other members are requeued with
// it (the default, -gang_fail requeue: the failed member goes back to
// pending too, so the gang forms again whole) or ended (-gang_fail kill:
// every member still running or pending ends EXIT). A member that fails
// after it started running (a non-zero exit, bkill) ends alone.

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/sched"
	"xce/lib/store"
)

const gangKill = "kill"

// gangSize is a stored gang size: below 2 a group is not a gang.
func gangSize(n int32) int32 {
	if n < 2 {
		return 0
	}
	return n
}

// snapGangs gives a snapshot the gang groups (c.mu held).
func (c *Controller) snapGangs(snap *sched.Snapshot) {
	for p, g := range c.jgroups.groups {
		if g.Gang > 1 {
			snap.GangGroups = append(snap.GangGroups, sched.GangGroup{Path: p, Size: int(g.Gang)})
		}
	}
	slices.SortFunc(snap.GangGroups, func(a, b sched.GangGroup) int { return strings.Compare(a.Path, b.Path) })
}

// gangPlacements drops every gang of the decision of which a member can
// no longer start (it left pending since the snapshot), and names each
// kept gang (c.mu held). It returns the gangs' names by job.
func (c *Controller) gangPlacements(d *sched.Decision) map[sched.JobKey]string {
	var bad map[int]bool
	lead := map[int]sched.JobKey{}
	for _, p := range d.Placements {
		if p.Gang == 0 {
			continue
		}
		if l, ok := lead[p.Gang]; !ok || p.Job.ID < l.ID || p.Job.ID == l.ID && p.Job.Index < l.Index {
			lead[p.Gang] = p.Job
		}
		if r := c.jobs[key{p.Job.ID, p.Job.Index}]; r == nil || r.job.State != api.JobState_PEND {
			if bad == nil {
				bad = map[int]bool{}
			}
			bad[p.Gang] = true
		}
	}
	if len(lead) == 0 {
		return nil
	}
	if bad != nil {
		d.Placements = slices.DeleteFunc(d.Placements, func(p sched.Placement) bool { return bad[p.Gang] })
	}
	names := map[sched.JobKey]string{}
	for _, p := range d.Placements {
		if p.Gang == 0 {
			continue
		}
		r := c.jobs[key{p.Job.ID, p.Job.Index}]
		names[p.Job] = fmt.Sprintf("%s@%s", api.JobGroupPath(r.eff.GetJobGroup()), lead[p.Gang])
	}
	return names
}

// gangSkip extends skip (the placements the controller does not start)
// to the whole gangs of the skipped ones.
func gangSkip(d *sched.Decision, skip map[sched.JobKey]bool) map[sched.JobKey]bool {
	if len(skip) == 0 {
		return skip
	}
	var gangs map[int]bool
	for _, p := range d.Placements {
		if p.Gang > 0 && skip[p.Job] {
			if gangs == nil {
				gangs = map[int]bool{}
			}
			gangs[p.Gang] = true
		}
	}
	for _, p := range d.Placements {
		if gangs[p.Gang] {
			skip[p.Job] = true
		}
	}
	return skip
}

// gangAct is a running member to terminate once the changes are written.
type gangAct struct {
	id     int64
	idx    int32
	ex     Executor
	reason api.TermReason
}

func sendGangActs(acts []gangAct) {
	for _, a := range acts {
		a.ex.Terminate(a.id, a.idx, a.reason)
	}
}

// gangFailed reports whether a member's change from old to nj is a
// failure at start or a host's.
func gangFailed(old, nj *api.Job) bool {
	if old.GetGang() == "" || !isRunning(old.State) {
		return false
	}
	switch {
	case nj.State == api.JobState_PEND || nj.State == api.JobState_PSUSP:
		return !old.RequeuePending || old.TermReason != api.TermReason_TERM_REQUEUE_ADMIN
	case nj.State == api.JobState_EXIT:
		return nj.Pid == 0 || nj.TermReason == api.TermReason_TERM_REMOVE_HUNG_JOB
	}
	return false
}

// gangFailures looks for members failing in changes (not yet written)
// and returns the changes that requeue or end their gangs' other members,
// with the terminations to send once written; a failed member's own
// change may be rewritten (c.mu held).
func (c *Controller) gangFailures(changes []store.Change) ([]store.Change, []gangAct) {
	last := map[key]int{}
	for i, ch := range changes {
		if ch.Job != nil {
			last[key{ch.Job.JobId, ch.Job.ArrayIndex}] = i
		}
	}
	var out []store.Change
	var acts []gangAct
	done := map[string]bool{}
	for k, i := range last {
		r := c.jobs[k]
		nj := changes[i].Job
		if r == nil || !gangFailed(r.job, nj) || done[r.job.Gang] {
			continue
		}
		name := r.job.Gang
		done[name] = true
		group := api.JobGroupPath(r.eff.GetJobGroup())
		kill := false
		if g := c.jgroups.groups[group]; g != nil && g.GangFail == gangKill {
			kill = true
		}
		detail := fmt.Sprintf("Gang group %s: member <%s> failed to start", group, jobRef(k))
		// The failed member itself: back to pending with the others, or
		// ended with them.
		switch {
		case kill && !isFinished(nj.State):
			nj.State, nj.EndTime = api.JobState_EXIT, time.Now().UnixNano()
			nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_OTHER, true
			changes[i].Event = c.event(nj, api.EventType_FINISH, "", detail+"; the gang is ended")
		case !kill && nj.State == api.JobState_EXIT:
			requeued(nj, false)
			changes[i].Event = c.event(nj, api.EventType_PEND_AGAIN, "", detail+"; the gang is requeued")
		}
		for ok, or := range c.jobs {
			if ok == k || or.job.Gang != name {
				continue
			}
			m, staged := or.job, false
			if j, ok := last[ok]; ok {
				m, staged = changes[j].Job, true // changing in this batch too
			}
			switch {
			case isRunning(m.State) && !m.RequeuePending:
				// A member whose own change is in this batch (its start,
				// reported in the same cycle) keeps that change and its
				// event: the signal is a change of its own after it.
				if staged {
					m = c.cloneJob(m)
				} else {
					m = c.clone(or)
				}
				reason, what := api.TermReason_TERM_REQUEUE_ADMIN, "; REQUEUE"
				if kill {
					reason, what = api.TermReason_TERM_OTHER, "; KILL"
				}
				m.RequeuePending = !kill
				m.TermReason, m.TermReasonSet = reason, true
				acts = append(acts, gangAct{or.job.JobId, or.job.ArrayIndex, c.execOf(or.job), reason})
				out = append(out, store.Change{Job: m, Event: c.event(m, api.EventType_SIGNAL, "", detail+what)})
			case kill && (m.State == api.JobState_PEND || m.State == api.JobState_PSUSP):
				if !staged {
					m = c.clone(or)
				}
				m.State, m.EndTime = api.JobState_EXIT, time.Now().UnixNano()
				m.TermReason, m.TermReasonSet = api.TermReason_TERM_OTHER, true
				ev := c.event(m, api.EventType_FINISH, "", detail+"; the gang is ended")
				if staged {
					changes[last[ok]].Event = ev
				} else {
					out = append(out, store.Change{Job: m, Event: ev})
				}
			}
		}
		slog.Info("gang member failed", "group", group, "job", jobRef(k), "kill", kill)
	}
	return out, acts
}

func jobRef(k key) string {
	return sched.JobKey{ID: k.id, Index: k.idx}.String()
}
