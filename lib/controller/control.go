package controller

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/store"
)

const (
	errNoQueue     = "No such queue"
	errBadHost     = "Bad host name, host group name or cluster name"
	errStarted     = "Job has already started"
	errArrayElem   = "A single element of a job array cannot be switched; switch the whole array"
	reasonHostAdm  = "Closed by LSF administrator: 1 host"
	reasonRequeued = "Requeued job is waiting for rescheduling"
)

// Control carries out badmin's queue and host controls, bswitch and
// brequeue. Each change is written before it is acted on.
func (c *Controller) Control(who Caller, req *api.ControlRequest) *api.ControlReply {
	switch req.Action {
	case api.ControlRequest_QUEUE_CLOSE, api.ControlRequest_QUEUE_OPEN,
		api.ControlRequest_QUEUE_INACTIVATE, api.ControlRequest_QUEUE_ACTIVATE:
		return c.queueControl(who, req)
	case api.ControlRequest_HOST_CLOSE, api.ControlRequest_HOST_OPEN:
		return c.hostControl(who, req)
	case api.ControlRequest_SWITCH:
		return c.switchJobs(who, req)
	case api.ControlRequest_REQUEUE:
		return c.requeue(who, req)
	case api.ControlRequest_TOP, api.ControlRequest_BOTTOM:
		return c.move(who, req)
	case api.ControlRequest_MBD_RESTART:
		return c.transferLeadership(who)
	case api.ControlRequest_HOST_DRAIN, api.ControlRequest_HOST_DECOMMISSION:
		reply := &api.ControlReply{}
		for i, e := range c.drainControl(who, req.Names, req.Action == api.ControlRequest_HOST_DECOMMISSION) {
			reply.Results = append(reply.Results, &api.ControlResult{Name: req.Names[i], Error: e})
		}
		return reply
	}
	return &api.ControlReply{Results: []*api.ControlResult{{Error: "unknown control"}}}
}

// transferLeadership is badmin mbdrestart with several candidates: the
// leadership moves to another candidate, which restores the state from
// its own store while this one becomes a standby; running jobs keep
// running and their workers reconnect. With one controller there is
// nothing to move to.
func (c *Controller) transferLeadership(who Caller) *api.ControlReply {
	res := &api.ControlResult{}
	switch {
	case !c.isAdmin(who.UID):
		res.Error = errPermission
	case c.cfg.Replication == nil:
		res.Error = "this cluster has one controller (no [cluster] controllers): there is no candidate to hand the leadership to; restart xced itself, or use badmin reconfig to reread the configuration"
	default:
		// The next leader goes on from the exact next job id, not from
		// the end of the block this one reserved.
		if err := c.Close(); err != nil {
			slog.Warn("the next job id was not recorded before handing on the leadership", "err", err)
		}
		if err := c.cfg.Replication.Transfer(); err != nil {
			res.Error = err.Error()
		}
	}
	return &api.ControlReply{Results: []*api.ControlResult{res}}
}

func (c *Controller) queueControl(who Caller, req *api.ControlRequest) *api.ControlReply {
	reply := &api.ControlReply{}
	admin := c.isAdmin(who.UID)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range req.Names {
		res := &api.ControlResult{Name: name}
		reply.Results = append(reply.Results, res)
		q := c.queues[name]
		switch {
		case !admin:
			res.Error = errPermission
			continue
		case q == nil:
			res.Error = errNoQueue
			continue
		}
		open, active := q.q.Open, q.q.Active
		switch req.Action {
		case api.ControlRequest_QUEUE_CLOSE:
			open = false
		case api.ControlRequest_QUEUE_OPEN:
			open = true
		case api.ControlRequest_QUEUE_INACTIVATE:
			active = false
		case api.ControlRequest_QUEUE_ACTIVATE:
			active = true
		}
		b, _ := proto.Marshal(&api.QueueState{Closed: !open, Inactive: !active})
		if err := c.store.SetMeta("queue/"+name, b); err != nil {
			res.Error = "Failed to record the change: " + err.Error()
			continue
		}
		q.q.Open, q.q.Active = open, active
	}
	c.Kick()
	return reply
}

func (c *Controller) hostControl(who Caller, req *api.ControlRequest) *api.ControlReply {
	reply := &api.ControlReply{}
	admin := c.isAdmin(who.UID)
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, name := range req.Names {
		if name == "all" {
			names = append(names, c.hostNames...)
		} else {
			names = append(names, name)
		}
	}
	for _, name := range names {
		res := &api.ControlResult{Name: name}
		reply.Results = append(reply.Results, res)
		switch {
		case !admin:
			res.Error = errPermission
			continue
		case c.hosts[name] == nil:
			res.Error = errBadHost
			continue
		}
		closed := req.Action == api.ControlRequest_HOST_CLOSE
		var value []byte
		if closed {
			value = []byte(req.Comment + " ") // never nil: nil deletes
		}
		if err := c.store.SetMeta("host/"+name, value); err != nil {
			res.Error = "Failed to record the change: " + err.Error()
			continue
		}
		c.hosts[name].closed = closed
		if closed {
			c.closedHosts[name] = strings.TrimSpace(req.Comment)
		} else {
			delete(c.closedHosts, name)
		}
	}
	c.Kick()
	return reply
}

// restoreControls applies the queue and host controls kept in the store.
func (c *Controller) restoreControls() error {
	qs, err := c.store.Meta("queue/")
	if err != nil {
		return err
	}
	for k, v := range qs {
		st := &api.QueueState{}
		if q := c.queues[k[len("queue/"):]]; q != nil && proto.Unmarshal(v, st) == nil {
			q.q.Open, q.q.Active = !st.Closed, !st.Inactive
		}
	}
	hs, err := c.store.Meta("host/")
	if err != nil {
		return err
	}
	c.closedHosts = map[string]string{}
	for k, v := range hs {
		name := k[len("host/"):]
		c.closedHosts[name] = strings.TrimSpace(string(v))
		if h := c.hosts[name]; h != nil {
			h.closed = true
		}
	}
	return nil
}

// switchJobs is bswitch: pending jobs are layered again with the new queue.
func (c *Controller) switchJobs(who Caller, req *api.ControlRequest) *api.ControlReply {
	reply := &api.ControlReply{}
	conf := c.config()
	admin := c.isAdmin(who.UID)
	c.mu.Lock()
	defer c.mu.Unlock()
	targets, missing := c.signalTargets(who, &api.SignalRequest{Refs: req.Refs})
	for _, ref := range missing {
		reply.Results = append(reply.Results, &api.ControlResult{Ref: ref, Error: errNoJob})
	}
	whole := map[int64]bool{}
	for _, ref := range req.Refs {
		if ref.ArrayIndex < 0 {
			whole[ref.JobId] = true
		}
	}
	done := map[int64]bool{}
	var changes []store.Change
	for _, r := range targets {
		id := r.job.JobId
		res := &api.ControlResult{Ref: &api.JobRef{JobId: id, ArrayIndex: r.job.ArrayIndex}}
		reply.Results = append(reply.Results, res)
		switch {
		case r.eff.GetUid() != who.UID && !admin:
			res.Error = errPermission
			continue
		case isFinished(r.job.State):
			res.Error = errFinished
			continue
		case isRunning(r.job.State):
			res.Error = errStarted
			continue
		case len(c.elements(id)) > 1 && !whole[id]:
			res.Error = errArrayElem
			continue
		case done[id]:
			continue
		}
		done[id] = true
		for _, e := range c.elements(id) {
			if isRunning(e.job.State) {
				res.Error = errStarted
			}
		}
		if res.Error != "" {
			continue
		}
		// LSF names the job, not the queue: "Job <4>: No such queue".
		if q := c.queues[req.Queue]; q == nil {
			res.Error = errNoQueue
			continue
		} else if !q.q.Open {
			res.Error = "Queue has been closed"
			continue
		}
		spec, _, err := c.store.Spec(id)
		if err == nil {
			spec.Env, err = c.store.Env(spec.EnvRef)
		}
		if err != nil {
			res.Error = err.Error()
			continue
		}
		spec.Uid, spec.User = r.eff.GetUid(), r.eff.GetUser()
		spec.Queue = req.Queue
		_, eff, err := c.layerWith(conf, spec)
		if err == nil && (c.queues[eff.Queue] == nil || !c.queues[eff.Queue].q.Open) {
			err = userErr("%s: Queue has been closed", eff.Queue)
		}
		if err != nil {
			res.Error = err.Error()
			continue
		}
		origin := splitOrigin(eff)
		raw, err := proto.Marshal(eff)
		if err != nil {
			res.Error = fmt.Sprint("encode the new spec: ", err)
			continue
		}
		for i, e := range c.elements(id) {
			nj := c.clone(e)
			ch := store.Change{Job: nj, Event: c.event(nj, api.EventType_MODIFY, lookupName(who), "Switched to Queue <"+req.Queue+">")}
			if i == 0 {
				ch.EffectiveRaw, ch.OriginRaw = raw, origin
			}
			changes = append(changes, ch)
		}
	}
	if err := c.commit(changes); err != nil {
		for _, res := range reply.Results {
			if res.Error == "" {
				res.Error = "Failed to record the request: " + err.Error()
			}
		}
	}
	c.dirty = true
	c.Kick()
	return reply
}

// requeue is brequeue: finished and pending jobs go back to pending at
// once; running ones are killed and go back to pending when they end.
func (c *Controller) requeue(who Caller, req *api.ControlRequest) *api.ControlReply {
	reply := &api.ControlReply{}
	admin := c.isAdmin(who.UID)
	user := lookupName(who)
	wanted := map[api.JobState]bool{}
	for _, s := range req.States {
		wanted[s] = true
	}
	c.mu.Lock()
	targets, missing := c.signalTargets(who, &api.SignalRequest{Refs: req.Refs, All: len(req.Refs) == 0})
	for _, ref := range missing {
		reply.Results = append(reply.Results, &api.ControlResult{Ref: ref, Error: errNoJob})
	}
	if len(req.Refs) == 0 {
		// With no job id, finished jobs count too (signalTargets skips them).
		for _, r := range c.jobs {
			if isFinished(r.job.State) && (r.eff.GetUid() == who.UID || admin) {
				targets = append(targets, r)
			}
		}
	}
	var changes []store.Change
	type killOn struct {
		id     int64
		idx    int32
		ex     Executor
		reason api.TermReason
	}
	var kill []killOn
	for _, r := range targets {
		s := r.job.State
		// -r covers suspended jobs too: they hold the slots of a started job.
		if eligible := wanted[s] || wanted[api.JobState_RUN] && isRunning(s); !eligible {
			if len(req.Refs) > 0 {
				reply.Results = append(reply.Results, &api.ControlResult{
					Ref: &api.JobRef{JobId: r.job.JobId, ArrayIndex: r.job.ArrayIndex}, Error: stateError(s)})
			}
			continue
		}
		res := &api.ControlResult{Ref: &api.JobRef{JobId: r.job.JobId, ArrayIndex: r.job.ArrayIndex}}
		reply.Results = append(reply.Results, res)
		if r.eff.GetUid() != who.UID && !admin {
			res.Error = errPermission
			continue
		}
		nj := c.clone(r)
		if isRunning(s) {
			reason := api.TermReason_TERM_REQUEUE_OWNER
			if admin && r.eff.GetUid() != who.UID {
				reason = api.TermReason_TERM_REQUEUE_ADMIN
			}
			nj.RequeuePending, nj.RequeueHold = true, req.Hold
			nj.TermReason, nj.TermReasonSet = reason, true
			ev := c.event(nj, api.EventType_SIGNAL, user, "REQUEUE")
			changes = append(changes, store.Change{Job: nj, Event: ev})
			kill = append(kill, killOn{r.job.JobId, r.job.ArrayIndex, c.execOf(r.job), reason})
			continue
		}
		requeued(nj, req.Hold)
		changes = append(changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, user, reasonRequeued)})
	}
	err := c.commit(changes)
	c.mu.Unlock()
	if err != nil {
		for _, res := range reply.Results {
			if res.Error == "" {
				res.Error = "Failed to record the request: " + err.Error()
			}
		}
		return reply
	}
	for _, k := range kill {
		k.ex.Terminate(k.id, k.idx, k.reason)
	}
	c.Kick()
	return reply
}

// requeued turns a job's record back into a pending one.
func requeued(nj *api.Job, hold bool) {
	nj.State = api.JobState_PEND
	if hold {
		nj.State = api.JobState_PSUSP
	}
	nj.StartTime, nj.EndTime = 0, 0
	nj.ExecHosts, nj.AllocSlots = nil, 0
	nj.Pid, nj.ShepherdPid = 0, 0
	nj.ExitStatus, nj.TermReasonSet, nj.TermReason = 0, false, api.TermReason_TERM_UNKNOWN
	nj.Usage, nj.ExecCwd, nj.ExecHome, nj.SpoolOutput = nil, "", "", ""
	nj.RequeuePending, nj.RequeueHold = false, false
}

func stateError(s api.JobState) string {
	switch {
	case isFinished(s):
		return errFinished
	case isRunning(s):
		return errStarted
	}
	return errNotStarted
}

func lookupName(who Caller) string {
	name, _ := lookupUser(who.UID)
	return name
}

// errBeyond is btop/bbot's warning when the position is past the end.
const errBeyond = "Warning: position value <%d> is beyond movable range."

// move is btop / bbot: a pending job goes to a position counted from the
// top or the bottom among the pending jobs of its queue with its user
// priority (an ordinary user's own jobs only). The jobs it passes get new
// order keys, so a move to position N writes N records.
func (c *Controller) move(who Caller, req *api.ControlRequest) *api.ControlReply {
	reply := &api.ControlReply{}
	admin := c.isAdmin(who.UID)
	user := lookupName(who)
	c.mu.Lock()
	defer c.mu.Unlock()
	targets, missing := c.signalTargets(who, &api.SignalRequest{Refs: req.Refs})
	for _, ref := range missing {
		reply.Results = append(reply.Results, &api.ControlResult{Ref: ref, Error: errNoJob})
	}
	if c.dirty {
		sort.SliceStable(c.pending, func(a, b int) bool { return c.before(c.pending[a], c.pending[b]) })
		c.dirty = false
	}
	for _, r := range targets {
		res := &api.ControlResult{Ref: &api.JobRef{JobId: r.job.JobId, ArrayIndex: r.job.ArrayIndex}}
		reply.Results = append(reply.Results, res)
		switch {
		case r.eff.GetUid() != who.UID && !admin:
			res.Error = errPermission
			continue
		case r.job.State != api.JobState_PEND && r.job.State != api.JobState_PSUSP:
			res.Error = stateError(r.job.State)
			continue
		}
		// The jobs it moves among, in dispatch order, without it.
		var peers []*rec
		for _, p := range c.pending {
			if p != r && p.job.State == api.JobState_PEND && p.eff.GetQueue() == r.eff.GetQueue() &&
				p.eff.GetUserPriority() == r.eff.GetUserPriority() && (admin || p.eff.GetUid() == who.UID) {
				peers = append(peers, p)
			}
		}
		pos := int(max(req.Position, 1))
		if pos > len(peers)+1 {
			res.Warning = fmt.Sprintf(errBeyond, pos)
			pos = len(peers) + 1
		}
		// Renumber the jobs it passes and give it the key just beside them.
		var changes []store.Change
		set := func(x *rec, order int64) {
			if x.job.Order == order {
				return
			}
			nj := c.clone(x)
			nj.Order = order
			changes = append(changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_MODIFY, user, "Moved in the queue")})
		}
		if req.Action == api.ControlRequest_TOP {
			m := r.job.Order
			if pos-1 < len(peers) {
				m = peers[pos-1].job.Order
			}
			for i := 0; i < pos-1; i++ {
				set(peers[i], m-int64(pos-i))
			}
			set(r, m-1)
		} else {
			m := r.job.Order
			from := len(peers) - (pos - 1) // the first job that stays below it
			if from-1 >= 0 {
				m = peers[from-1].job.Order
			}
			for i := from; i < len(peers); i++ {
				set(peers[i], m+int64(i-from+2))
			}
			set(r, m+1)
		}
		if err := c.commit(changes); err != nil {
			res.Error = "Failed to record the request: " + err.Error()
			continue
		}
		c.dirty = true
	}
	c.Kick()
	return reply
}
