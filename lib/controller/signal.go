package controller

import (
	"sort"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/store"
)

// LSF's texts for job control failures.
const (
	errNoJob         = "No matching job found"
	errFinished      = "Job has already finished"
	errNotStarted    = "Job has not started yet"
	errPermission    = "User permission denied"
	errNotSuspended  = "Job is not suspended"
	errAlreadyStoped = "Job has already been suspended"
)

// killedAsDone reports whether a job was killed with bkill -d: its
// termination was requested (term_reason_set) without a reason, which no
// other request leaves. The mark is on the job's record, so it survives a
// restart of the controller; when the job ends it is recorded DONE.
func killedAsDone(j *api.Job) bool {
	return j.TermReasonSet && j.TermReason == api.TermReason_TERM_UNKNOWN
}

// pendingAction is what bkill -s does to a job that has not started: as
// in LSF, a pending job can be killed (KILL, TERM, INT end it), suspended
// (STOP, TSTP: PSUSP) and resumed (CONT), and takes no other signal. A
// started job gets the signal itself.
func pendingAction(req *api.SignalRequest, s api.JobState) api.SignalRequest_Action {
	if req.Action != api.SignalRequest_SIGNAL || isRunning(s) {
		return req.Action
	}
	switch syscall.Signal(req.Signal) {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT:
		return api.SignalRequest_KILL
	case syscall.SIGSTOP, syscall.SIGTSTP:
		return api.SignalRequest_STOP
	case syscall.SIGCONT:
		return api.SignalRequest_RESUME
	}
	return req.Action
}

// Signal carries out bkill, bstop and bresume. Jobs are chosen by
// signalTargets. bkill kills a pending job at once (EXIT) and asks the
// host to terminate a started one; -r records a started job as ended at
// once and sends SIGKILL; -d (ignored with -r and -s, and for pending
// jobs) records a started job as DONE once it has ended; -b with no job id
// leaves out the jobs that cannot be killed instead of reporting them.
func (c *Controller) Signal(who Caller, req *api.SignalRequest) *api.SignalReply {
	reply := &api.SignalReply{}
	c.mu.Lock()
	targets, missing := c.signalTargets(who, req)
	for _, ref := range missing {
		reply.Results = append(reply.Results, &api.SignalResult{Ref: ref, Error: errNoJob})
	}
	admin := c.isAdmin(who.UID)
	user, _ := lookupUser(who.UID)
	var changes []store.Change
	// What to do once the change is on disk; the ids are copied because
	// r.job may be replaced as soon as the lock is released.
	type act struct {
		id  int64
		idx int32
		sig syscall.Signal
		kil bool
		ex  Executor
		// why (kil): the job report on the host names it
		reason api.TermReason
	}
	var acts []act
	for _, r := range targets {
		ref := &api.JobRef{JobId: r.job.JobId, ArrayIndex: r.job.ArrayIndex}
		res := &api.SignalResult{Ref: ref}
		reply.Results = append(reply.Results, res)
		if r.eff.GetUid() != who.UID && !admin {
			res.Error = errPermission
			continue
		}
		s := r.job.State
		if isFinished(s) {
			res.Error = errFinished
			continue
		}
		byAdmin := admin && r.eff.GetUid() != who.UID
		switch action := contPreempted(req, r.job, pendingAction(req, s)); action {
		case api.SignalRequest_KILL:
			nj := c.clone(r)
			reason := api.TermReason_TERM_OWNER
			if byAdmin {
				reason = api.TermReason_TERM_ADMIN
			}
			nj.TermReason, nj.TermReasonSet = reason, true
			nj.KillReason = req.Reason
			ev := c.event(nj, api.EventType_SIGNAL, user, "KILL")
			ev.Signal = int32(syscall.SIGKILL)
			switch {
			case !isRunning(s):
				// A pending job is simply removed.
				nj.State = api.JobState_EXIT
				nj.EndTime = time.Now().UnixNano()
				ev.Type, ev.State = api.EventType_FINISH, nj.State
				ev.TermReason = reason
			case req.Force:
				// bkill -r: ended now, whatever the process does next (its
				// report is ignored: the job is no longer running).
				reason = api.TermReason_TERM_FORCE_OWNER
				if byAdmin {
					reason = api.TermReason_TERM_FORCE_ADMIN
				}
				nj.TermReason = reason
				nj.State = api.JobState_EXIT
				nj.EndTime = time.Now().UnixNano()
				nj.ExitStatus = 128 + int32(syscall.SIGKILL)
				ev.Type, ev.State, ev.TermReason, ev.ExitStatus = api.EventType_FINISH, nj.State, reason, nj.ExitStatus
				acts = append(acts, act{id: r.job.JobId, idx: r.job.ArrayIndex, ex: c.execOf(r.job), sig: syscall.SIGKILL})
			default:
				if req.MarkDone {
					// bkill -d: a termination request without a reason
					// (killedAsDone) makes the job DONE when it ends.
					nj.TermReason = api.TermReason_TERM_UNKNOWN
				}
				acts = append(acts, act{id: r.job.JobId, idx: r.job.ArrayIndex, ex: c.execOf(r.job), kil: true, reason: nj.TermReason})
			}
			changes = append(changes, store.Change{Job: nj, Event: ev})
		case api.SignalRequest_STOP:
			var to api.JobState
			switch s {
			case api.JobState_PEND:
				to = api.JobState_PSUSP
			case api.JobState_RUN, api.JobState_SSUSP:
				to = api.JobState_USUSP
				acts = append(acts, act{id: r.job.JobId, idx: r.job.ArrayIndex, ex: c.execOf(r.job), sig: syscall.SIGSTOP})
			default:
				res.Error = errAlreadyStoped
				continue
			}
			nj := c.clone(r)
			nj.State, nj.HeldByAdmin = to, byAdmin
			changes = append(changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_SUSPEND, user, "")})
		case api.SignalRequest_RESUME:
			var to api.JobState
			switch s {
			case api.JobState_PSUSP:
				to = api.JobState_PEND
			case api.JobState_USUSP:
				to = api.JobState_RUN
				if stillPreempted(r.job) {
					// Back to SSUSP: the scheduler resumes it once its
					// preemptor has given the slots back (preempt.go).
					to = api.JobState_SSUSP
					break
				}
				acts = append(acts, act{id: r.job.JobId, idx: r.job.ArrayIndex, ex: c.execOf(r.job), sig: syscall.SIGCONT})
			default:
				res.Error = errNotSuspended
				continue
			}
			if r.job.HeldByAdmin && !admin {
				res.Error = errPermission
				continue
			}
			nj := c.clone(r)
			nj.State, nj.HeldByAdmin = to, false
			changes = append(changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_RESUME, user, "")})
		case api.SignalRequest_SIGNAL:
			if !isRunning(s) {
				res.Error = errNotStarted
				continue
			}
			nj := c.clone(r)
			ev := c.event(nj, api.EventType_SIGNAL, user, signalName(syscall.Signal(req.Signal)))
			ev.Signal = req.Signal
			changes = append(changes, store.Change{Job: nj, Event: ev})
			acts = append(acts, act{id: r.job.JobId, idx: r.job.ArrayIndex, ex: c.execOf(r.job), sig: syscall.Signal(req.Signal)})
		}
	}
	if req.Bulk && len(req.Refs) == 0 && req.Action == api.SignalRequest_KILL && !req.Force {
		// bkill -b 0: the jobs that cannot be killed are skipped silently.
		kept := reply.Results[:0]
		for _, res := range reply.Results {
			if res.Error == "" {
				kept = append(kept, res)
			}
		}
		reply.Results = kept
	}
	// Written before acted on.
	if err := c.commit(changes); err != nil {
		c.mu.Unlock()
		for _, res := range reply.Results {
			if res.Error == "" {
				res.Error = "Failed to record the request: " + err.Error()
			}
		}
		return reply
	}
	c.mu.Unlock()
	for _, a := range acts {
		switch {
		case a.kil:
			a.ex.Terminate(a.id, a.idx, a.reason)
		case a.ex.Signal(a.id, a.idx, a.sig) != nil && a.sig == syscall.SIGKILL:
			// Not started far enough to be signalled: the worker kills it
			// as soon as it can.
			a.ex.Terminate(a.id, a.idx, a.reason)
		}
	}
	c.Kick()
	return reply
}

// signalTargets resolves a request to jobs (c.mu held). Jobs named by id
// must also pass the request's filters (a named job that does not is
// missing, "No matching job found"); without ids the filters select among
// the caller's (or -u's) unfinished jobs: all of them with job id 0 or
// -stat, else only the last submitted, as LSF does.
func (c *Controller) signalTargets(who Caller, req *api.SignalRequest) (targets []*rec, missing []*api.JobRef) {
	f := signalFilter(c.config(), req)
	if len(req.Refs) > 0 {
		for _, ref := range req.Refs {
			var found []*rec
			for _, r := range c.resolve(ref) {
				if f.match(who, r, true) {
					found = append(found, r)
				}
			}
			if len(found) == 0 {
				missing = append(missing, ref)
			}
			targets = append(targets, found...)
		}
		return targets, missing
	}
	var all []*rec
	for _, r := range c.jobs {
		if !isFinished(r.job.State) && f.match(who, r, false) {
			all = append(all, r)
		}
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].job.JobId != all[b].job.JobId {
			return all[a].job.JobId < all[b].job.JobId
		}
		return all[a].job.ArrayIndex < all[b].job.ArrayIndex
	})
	if req.All || len(req.States) > 0 || len(all) == 0 {
		return all, nil
	}
	// Without job id 0, only the last submitted matching job.
	last := all[len(all)-1].job.JobId
	for _, r := range all {
		if r.job.JobId == last {
			targets = append(targets, r)
		}
	}
	return targets, nil
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "HUP", syscall.SIGINT: "INT", syscall.SIGQUIT: "QUIT", syscall.SIGKILL: "KILL",
	syscall.SIGUSR1: "USR1", syscall.SIGUSR2: "USR2", syscall.SIGTERM: "TERM", syscall.SIGSTOP: "STOP",
	syscall.SIGTSTP: "TSTP", syscall.SIGCONT: "CONT", syscall.SIGALRM: "ALRM", syscall.SIGXCPU: "XCPU",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return s.String()
}

// termReasonOf is the reason a kill requested earlier gives the job's
// report: the one recorded on the job, TERM_UNKNOWN when none was.
func termReasonOf(j *api.Job) api.TermReason {
	if !j.TermReasonSet {
		return api.TermReason_TERM_UNKNOWN
	}
	return j.TermReason
}
