package controller

import (
	"fmt"
	"syscall"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/sched"
	"xce/lib/store"
)

// Preemption, as lib/sched decides it (lib/sched/preempt.go): the
// victims of a placement are suspended (SSUSP, LSF's SUSP_MBD_PREEMPT
// reason) or, in a queue with terminate_when = ["preempt"], ended
// (TERM_PREEMPT; a rerunnable job goes back to pending instead) in the
// same write as the preemptor's start, and signalled before the
// preemptor is launched. A placement whose job is no longer pending, or
// one of whose victims no longer runs as the scheduler saw it, is left
// out with its victims: nothing is preempted for a job that does not
// start. A suspended victim resumes when a later cycle says so
// (Decision.Resumes), which is also what happens when its preemptor did
// not start after all. Its user may stop it (bstop: USUSP, still holding
// no slots); bresume then makes it SSUSP again, as LSF's does, and the
// scheduler resumes it when its slots are back, never beside its
// preemptor.

// reasonPreempted is LSF's SUSP_MBD_PREEMPT text (bjobs -s, -l).
const reasonPreempted = "The job was preempted by mbatchd because of a higher priority job"

// reasonRsvActive is the suspending reason of a job suspended for an
// advance reservation's job (rsvsusp.go): LSF's SUSP_HOST_RSVACTIVE text.
const reasonRsvActive = "An advance reservation using the host is active"

// preemptAct is a signal for a victim or a resumed job, sent once the
// cycle's changes are on disk.
type preemptAct struct {
	id   int64
	idx  int32
	ex   Executor
	sig  syscall.Signal
	term bool // end it (TERM_PREEMPT) instead
}

// preemptCycle is what one cycle's preemption adds: its changes, written
// with the starts, and its signals.
type preemptCycle struct {
	changes []store.Change
	acts    []preemptAct
}

// preemptOn reports whether any queue takes part in preemption.
func preemptOn(conf *config.Config) bool {
	for _, q := range conf.Queues {
		if len(q.Preemptive) > 0 || len(q.Preemptable) > 0 {
			return true
		}
	}
	return false
}

// anyPreempted reports whether some job is suspended by preemption (c.mu
// held): a cycle must run to resume it even with nothing pending.
func (c *Controller) anyPreempted() bool {
	for _, r := range c.running {
		if r.job.State == api.JobState_SSUSP && stillPreempted(r.job) {
			return true
		}
	}
	return false
}

// stillPreempted reports whether a suspended job is one its preemptor
// has not given the slots back to yet: SSUSP by preemption, or stopped
// by its user (bstop, USUSP) since. LSF's bresume of such a job makes it
// SSUSP again, not RUN: only the scheduler resumes it.
func stillPreempted(j *api.Job) bool {
	return (j.State == api.JobState_SSUSP || j.State == api.JobState_USUSP) && j.PreemptedBy != 0 &&
		(j.SuspReason == reasonPreempted || j.SuspReason == reasonRsvActive)
}

// contPreempted makes bkill -s CONT of a job still preempted a bresume
// (LSF's equivalent), so that no signal continues it beside its
// preemptor.
func contPreempted(req *api.SignalRequest, j *api.Job, action api.SignalRequest_Action) api.SignalRequest_Action {
	if action == api.SignalRequest_SIGNAL && syscall.Signal(req.Signal) == syscall.SIGCONT && stillPreempted(j) {
		return api.SignalRequest_RESUME
	}
	return action
}

// allocPreempt is a running job's preemption state for the snapshot. A
// victim being ended (TERMINATE_WHEN=PREEMPT) no longer holds its slots
// either: its preemptor has them.
func allocPreempt(j *api.Job) sched.AllocPreempt {
	susp := stillPreempted(j) ||
		j.State == api.JobState_RUN && j.TermReasonSet && j.TermReason == api.TermReason_TERM_PREEMPT
	return sched.AllocPreempt{Suspended: susp, Count: int(j.PreemptCount), Stopped: susp && j.State == api.JobState_USUSP, Backfill: j.Backfill}
}

// preempt turns the decision's victims and resumes into changes and
// signals (c.mu held), kept in c.pre for the cycle to write and send. It
// returns the placements to leave out.
func (c *Controller) preempt(d *sched.Decision) map[sched.JobKey]bool {
	c.pre = preemptCycle{}
	var skip map[sched.JobKey]bool
	conf := c.config()
	taken := map[key]bool{}
	for _, p := range d.Placements {
		if len(p.Victims) == 0 {
			continue
		}
		rsv := c.suspendsForRsv(p.Job.ID, p.Job.Index) // rsvsusp.go
		r := c.jobs[key{p.Job.ID, p.Job.Index}]
		ok := r != nil && r.job.State == api.JobState_PEND
		for _, v := range p.Victims {
			vr := c.jobs[key{v.ID, v.Index}]
			if vr == nil || isFinished(vr.job.State) {
				continue // its slots are free anyway
			}
			if vr.job.State != api.JobState_RUN || taken[key{v.ID, v.Index}] {
				ok = false
			}
		}
		if !ok {
			if skip == nil {
				skip = map[sched.JobKey]bool{}
			}
			skip[p.Job] = true
			continue
		}
		for _, v := range p.Victims {
			vr := c.jobs[key{v.ID, v.Index}]
			if vr == nil || isFinished(vr.job.State) {
				continue
			}
			taken[key{v.ID, v.Index}] = true
			nj := c.clone(vr)
			nj.PreemptCount++
			nj.PreemptedBy = p.Job.ID
			detail, reason := "Preempted by job <"+p.Job.String()+">", reasonPreempted
			if rsv != "" {
				detail, reason = reasonRsvActive+": job <"+p.Job.String()+"> of advance reservation <"+rsv+"> needs its slots", reasonRsvActive
			}
			act := preemptAct{id: v.ID, idx: v.Index, ex: c.execOf(vr.job)}
			var ev *api.Event
			if q := conf.Queues[vr.eff.GetQueue()]; rsv == "" && q != nil && q.TerminateOnPreempt() {
				// Ended once; a rerunnable job comes back to pending
				// with its history (the requeue path of its end report).
				nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_PREEMPT, true
				nj.RequeuePending = vr.eff.GetRerunnable()
				ev = c.event(nj, api.EventType_SIGNAL, "", detail+"; TERMINATE_WHEN=PREEMPT")
				ev.Signal = int32(syscall.SIGKILL)
				act.term = true
			} else {
				nj.State = api.JobState_SSUSP
				nj.SuspReason = reason
				ev = c.event(nj, api.EventType_SUSPEND, "", detail)
				act.sig = syscall.SIGSTOP
			}
			c.pre.changes = append(c.pre.changes, store.Change{Job: nj, Event: ev})
			c.pre.acts = append(c.pre.acts, act)
		}
	}
	for _, k := range d.Resumes {
		r := c.jobs[key{k.ID, k.Index}]
		if r == nil || r.job.State != api.JobState_SSUSP || !stillPreempted(r.job) || taken[key{k.ID, k.Index}] {
			continue
		}
		nj := c.clone(r)
		nj.State, nj.SuspReason = api.JobState_RUN, ""
		detail := fmt.Sprintf("Resumed after preemption by job <%d>", r.job.PreemptedBy)
		if r.job.SuspReason == reasonRsvActive {
			detail = fmt.Sprintf("Resumed: the advance reservation's job <%d> no longer needs its slots", r.job.PreemptedBy)
		}
		c.pre.changes = append(c.pre.changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_RESUME, "", detail)})
		c.pre.acts = append(c.pre.acts, preemptAct{id: k.ID, idx: k.Index, ex: c.execOf(r.job), sig: syscall.SIGCONT})
	}
	return skip
}

// takePreempt returns the cycle's preemption changes and signals, and
// forgets them (c.mu held).
func (c *Controller) takePreempt() preemptCycle {
	p := c.pre
	c.pre = preemptCycle{}
	return p
}

// send delivers the signals of a written preemption: victims are stopped
// or ended, resumed jobs continued.
func (p preemptCycle) send() {
	for _, a := range p.acts {
		if a.term {
			a.ex.Terminate(a.id, a.idx, api.TermReason_TERM_PREEMPT)
			continue
		}
		a.ex.Signal(a.id, a.idx, a.sig)
	}
}
