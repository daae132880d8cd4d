package controller

import (
	"sort"
	"time"

	"xce/lib/api"
)

// Pending reasons, in LSF's wording. Host-level reasons carry the number of
// hosts they apply to, as `bjobs -p` prints them.
const (
	reasonNew        = "New job is waiting for scheduling"
	reasonSlots      = "Not enough job slot(s): 1 host"
	reasonExclNeeded = "Job's requirement for exclusive execution not satisfied: 1 host"
	reasonExclRun    = "Running an exclusive job: 1 host"
	reasonInactive   = "The queue is inactivated by the administrator"
	reasonBegin      = "The job has a specified start time"
	reasonUserHold   = "The job was suspended by the user while pending"
	reasonAdminHold  = "The job was suspended by LSF admin or root while pending"
	reasonArrayLimit = "The job array has reached its limit of running elements"
	reasonDepWait    = "Job dependency condition not satisfied"
	reasonDepNever   = "Dependency condition invalid or never satisfied"
)

// schedule places pending jobs on free slots, first come first served
// within queue priority and user priority (c.mu held). It returns the
// dispatched jobs' new records; the caller writes them before launching.
func (c *Controller) schedule() []*api.Job {
	if c.dirty {
		sort.SliceStable(c.pending, func(a, b int) bool { return c.before(c.pending[a], c.pending[b]) })
		c.dirty = false
	}
	now := time.Now()
	c.lastCycle = now
	c.cycleWhy = ""
	free := c.cfg.Slots - c.host.used
	var inUse limitUse // counted when the first job with limits comes
	var starts []*api.Job
	running := map[int64]int{} // running elements per array with a limit
	kept := c.pending[:0]
	i := 0
	for ; i < len(c.pending); i++ {
		r := c.pending[i]
		if r.job.State != api.JobState_PEND {
			continue // held, killed or started since it was queued
		}
		if free <= 0 {
			// Nothing else can start; the rest wait for the same reason.
			c.cycleWhy = reasonSlots
			if c.host.exclusive {
				c.cycleWhy = reasonExclRun
			}
			break
		}
		kept = append(kept, r)
		if q := c.queues[r.eff.GetQueue()]; q != nil && !q.q.Active {
			r.why = reasonInactive
			if q.q.LostAndFound {
				r.why = reasonLost
			}
			continue
		}
		if bt := r.eff.GetBeginTime(); bt > 0 && now.Unix() < bt {
			r.why = reasonBegin
			continue
		}
		if dep := r.eff.GetDependency(); dep != "" {
			switch c.dependencyMet(r, dep) {
			case depWait:
				r.why = reasonDepWait
				continue
			case depNever:
				r.why = reasonDepNever
				continue
			}
		}
		if lim := int(r.eff.GetArrayLimit()); lim > 0 {
			n, ok := running[r.job.JobId]
			if !ok {
				for _, e := range c.byID[r.job.JobId] {
					if isRunning(e.job.State) {
						n++
					}
				}
			}
			if n >= lim {
				running[r.job.JobId] = n
				r.why = reasonArrayLimit
				continue
			}
			running[r.job.JobId] = n + 1
		}
		if c.host.exclusive {
			r.why = reasonExclRun
			continue
		}
		if len(r.eff.limits) > 0 {
			if inUse == nil {
				inUse = c.limitUsage()
			}
			if why := inUse.blocked(r); why != "" {
				r.why = why
				continue
			}
		}
		need := int(max(r.eff.GetMinTasks(), 1))
		if r.eff.GetExclusive() && c.host.used > 0 {
			r.why = reasonExclNeeded
			continue
		}
		if need > free {
			r.why = reasonSlots
			continue
		}
		slots := min(int(max(r.eff.GetMaxTasks(), int32(need))), free)
		free -= slots
		c.host.used += slots
		if r.eff.GetExclusive() {
			c.host.exclusive = true
			free = 0
		}
		if inUse != nil {
			inUse.take(r, slots)
		}
		nj := c.clone(r)
		nj.State = api.JobState_RUN
		nj.StartTime = now.UnixNano()
		nj.ExecHosts = []*api.HostSlots{{Host: c.cfg.Host, Slots: int32(slots)}}
		nj.AllocSlots = int32(slots)
		nj.PendReason = ""
		if r.eff.GetOutputFile() == "" {
			nj.SpoolOutput = c.exec.SpoolOutput(nj.JobId, nj.ArrayIndex)
		}
		starts = append(starts, nj)
		kept = kept[:len(kept)-1]
	}
	kept = append(kept, c.pending[i:]...)
	// Clear the tail so dropped records can be collected.
	for j := len(kept); j < len(c.pending); j++ {
		c.pending[j] = nil
	}
	c.pending = kept
	return starts
}

// before orders pending jobs: queue priority, then user priority (-sp),
// then submission order.
func (c *Controller) before(a, b *rec) bool {
	pa, pb := c.queuePrio(a), c.queuePrio(b)
	if pa != pb {
		return pa > pb
	}
	if ua, ub := a.eff.GetUserPriority(), b.eff.GetUserPriority(); ua != ub {
		return ua > ub
	}
	if a.job.JobId != b.job.JobId {
		return a.job.JobId < b.job.JobId
	}
	return a.job.ArrayIndex < b.job.ArrayIndex
}

func (c *Controller) queuePrio(r *rec) int32 {
	if q := c.queues[r.eff.GetQueue()]; q != nil {
		return q.q.Priority
	}
	return 0
}

// pendReason is what bjobs -p shows for a pending or held job (c.mu held).
func (c *Controller) pendReason(r *rec) string {
	switch r.job.State {
	case api.JobState_PSUSP:
		if r.job.HeldByAdmin {
			return reasonAdminHold
		}
		return reasonUserHold
	case api.JobState_PEND:
	default:
		return ""
	}
	if r.why != "" {
		return r.why
	}
	if c.cycleWhy != "" && r.job.SubmitTime < c.lastCycle.UnixNano() {
		return c.cycleWhy
	}
	return reasonNew
}

// limitKey names what a configured limit counts: a queue's, a user's in a
// queue, a project's or a shared resource's use.
type limitKey struct {
	kind api.PendLimit_Kind
	name string
	user string // QUEUE_USER_SLOTS only
}

// limitUse is what the started jobs take from each configured limit.
type limitUse map[limitKey]int64

func keyOf(p *api.PendLimit, r *rec) limitKey {
	k := limitKey{kind: p.Kind, name: p.Name}
	if p.Kind == api.PendLimit_QUEUE_USER_SLOTS {
		k.user = r.eff.GetUser()
	}
	return k
}

// amount is what a job takes from one of its limits: its slots for slot
// limits, what the layering computed otherwise.
func amount(p *api.PendLimit, slots int) int64 {
	switch p.Kind {
	case api.PendLimit_QUEUE_SLOTS, api.PendLimit_QUEUE_USER_SLOTS, api.PendLimit_QUEUE_HOST_SLOTS, api.PendLimit_PROJECT_SLOTS:
		return int64(slots)
	}
	return p.Need
}

// limitUsage adds up the started jobs' use of every limit (c.mu held).
// With one host, a queue's per-host slots are its slots.
func (c *Controller) limitUsage() limitUse {
	u := limitUse{}
	for _, r := range c.jobs {
		if isRunning(r.job.State) {
			u.take(r, int(r.job.AllocSlots))
		}
	}
	return u
}

func (u limitUse) take(r *rec, slots int) {
	for _, p := range r.eff.limits {
		u[keyOf(p, r)] += amount(p, slots)
	}
}

// blocked is the reason a limit holds the job now, "" when none does.
func (u limitUse) blocked(r *rec) string {
	need := int(max(r.eff.GetMinTasks(), 1))
	for _, p := range r.eff.limits {
		if u[keyOf(p, r)]+amount(p, need) > p.Max {
			return p.Reason
		}
	}
	return ""
}
