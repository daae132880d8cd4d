package controller

import (
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/hostload"
	"xce/lib/policy"
	"xce/lib/resreq"
	"xce/lib/sched"
	"xce/lib/store"
)

// Pending reasons, in LSF's wording. Host-level reasons carry the number of
// hosts they apply to, as `bjobs -p` prints them.
const (
	reasonNew = "New job is waiting for scheduling"
	// reasonSlots is a host whose job slots (MXJ) are all taken: LSF's
	// PEND_HOST_JOB_LIMIT. "Not enough job slot(s)" (PEND_HOST_LESS_SLOTS)
	// is for a host with some free but fewer than the job needs; lib/sched
	// gives that one.
	reasonSlots      = "Job slot limit reached: 1 host"
	reasonExclRun    = "Running an exclusive job: 1 host"
	reasonInactive   = "The queue is inactivated by the administrator"
	reasonBegin      = "The job has a specified start time"
	reasonUserHold   = "The job was suspended by the user while pending"
	reasonAdminHold  = "The job was suspended by LSF admin or root while pending"
	reasonArrayLimit = "The job array has reached its limit of running elements"
	reasonDepWait    = "Job dependency condition not satisfied"
	reasonDepNever   = "Dependency condition invalid or never satisfied"
	// reasonPreExec waits out the retry interval after a failed pre-exec;
	// reasonPreExecLimit is a job suspended at the retry limit
	// (PEND_JOB_PRE_EXEC and PEND_PREEXEC_LIMIT).
	reasonPreExec      = "The job's pre-exec command exited with non-zero status"
	reasonPreExecLimit = "Job pre-exec retry limit"
	// reasonStartFailed is a job its host could not start (it never
	// ran), waiting startRetryInterval before it is dispatched again;
	// the host and its error follow.
	reasonStartFailed = "Failed to start the job on its host"
)

// startRetryInterval is how long a job its host could not start waits
// before it is dispatched again: long enough not to spin on a full disk,
// short enough that it runs soon after space returns.
const startRetryInterval = 10 * time.Second

// startFailure is when a job its host could not start may be dispatched
// again, and why it could not start.
type startFailure struct {
	at  time.Time
	why string
}

// schedule decides which pending jobs start now (c.mu held). It checks
// what only the controller knows (holds, begin times, dependencies, array
// limits, configured limits at the start of the cycle), then hands the
// remaining jobs with a snapshot of the host, the queues and the running
// jobs to lib/sched, which places them (slots, requirements, limits within
// the cycle, exclusivity) and gives every job it leaves pending its
// reasons. It returns the dispatched jobs' new records; the caller writes
// them before launching.
func (c *Controller) schedule() []*api.Job {
	if c.dirty {
		sort.SliceStable(c.pending, func(a, b int) bool { return c.before(c.pending[a], c.pending[b]) })
		c.dirty = false
	}
	now := time.Now()
	c.lastCycle = now
	c.cycleWhy = ""
	// A full cluster may preempt, or suspend for a reservation.
	anyFree := preemptOn(c.config()) || len(c.rsvs) > 0
	for _, h := range c.hosts {
		if h.usable() {
			anyFree = true
			break
		}
	}
	full := ""
	if len(c.pending) > 0 {
		full = c.diskFull()
	}
	var inUse policy.LimitUse  // counted when the first job with limits comes
	running := map[int64]int{} // running elements per array with a limit
	var cands []*rec
	share := c.newArrayCap()
	kept := c.pending[:0]
	i := 0
	for ; i < len(c.pending); i++ {
		r := c.pending[i]
		if r.job.State != api.JobState_PEND {
			r.queued = false
			continue // held, killed or started since it was queued
		}
		if full != "" {
			// No dispatch on a full disk (diskspace.go).
			c.cycleWhy = full
			break
		}
		if !anyFree && c.supply == nil {
			// Nothing else can start; the rest wait for the same reason.
			c.cycleWhy = c.fullReason()
			break
		}
		kept = append(kept, r)
		if c.waitsRegardless(r, now) || share.full(c, r) {
			continue
		}
		if lim := int(r.eff.GetArrayLimit()); lim > 0 {
			n, ok := running[r.job.JobId]
			if !ok {
				for _, e := range c.elements(r.job.JobId) {
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
		if len(r.eff.limits) > 0 {
			if inUse == nil {
				inUse = c.limitUsage()
			}
			if why := inUse.Blocked(r.eff.limits, r.eff.GetUser(), int(max(r.eff.GetMinTasks(), 1))); why != "" {
				r.why = why
				continue
			}
			// Counted as if it started, so that one cycle does not hand
			// lib/sched more jobs than the limit allows; one that does not
			// start this cycle is counted again from scratch in the next.
			inUse.Take(r.eff.limits, r.eff.GetUser(), int(max(r.eff.GetMinTasks(), 1)))
		}
		cands = append(cands, r)
	}
	// The jobs the loop did not reach wait for slots (cycleWhy), unless
	// they wait for something else whatever the slots: say so (bjobs -p,
	// -pi), and end the orphans among them.
	for _, r := range c.pending[i:] {
		if r.job.State == api.JobState_PEND && !c.waitsRegardless(r, now) {
			r.why = ""
		}
	}
	kept = append(kept, c.pending[i:]...)
	// Clear the tail so dropped records can be collected.
	for j := len(kept); j < len(c.pending); j++ {
		c.pending[j] = nil
	}
	c.pending = kept
	// Suspended jobs (preempted, or for a reservation that may be gone
	// since) resume in a cycle.
	if len(cands) == 0 && !c.anyPreempted() && !c.claimsPending() {
		return nil
	}

	snap := c.snapshot(now, cands)
	c.templateGroups(snap)
	d := sched.Schedule(snap)
	c.applyClaims(d, now)
	gangs := c.gangPlacements(d) // gang.go
	skip := gangSkip(d, c.preempt(d))
	c.stats.candidates, c.stats.buckets = len(cands), d.Buckets // metrics
	var starts []*api.Job
	for _, p := range d.Placements {
		r := c.jobs[key{p.Job.ID, p.Job.Index}]
		if r == nil || r.job.State != api.JobState_PEND || skip[p.Job] {
			continue
		}
		slots := 0
		var hosts []*api.HostSlots
		for _, h := range p.Hosts {
			slots += h.Slots
			hs := &api.HostSlots{Host: h.Host, Slots: int32(h.Slots)}
			if g := h.GPU; g != nil {
				for _, d := range g.Devices {
					hs.Gpus = append(hs.Gpus, int32(d))
				}
				hs.GpuExclusive, hs.GpuMemMb = g.Exclusive, g.Mem
			}
			hs.Cpus = recordCPUs(h)
			hs.Instances = recordInstances(h)
			hosts = append(hosts, hs)
		}
		setContainment(c.config(), r.eff, hosts)
		nj := c.clone(r)
		nj.State = api.JobState_RUN
		nj.StartTime = now.UnixNano()
		nj.ExecHosts = hosts
		nj.Backfill = p.Backfill // PREEMPT_JOBTYPE=BACKFILL (lib/sched/preempt.go)
		nj.Gang = gangs[p.Job]
		nj.AllocSlots = int32(slots)
		nj.PendReason = ""
		c.takeSlots(nj, r.eff.GetExclusive(), 1)
		// Also with -o: without LSB_STDOUT_DIRECT its output is spooled
		// there until the job ends (bpeek reads it).
		nj.SpoolOutput = c.execOf(nj).SpoolOutput(nj.JobId, nj.ArrayIndex)
		starts = append(starts, nj)
	}
	for k, lines := range d.Pending {
		if r := c.jobs[key{k.ID, k.Index}]; r != nil {
			r.why = strings.Join(lines, "\n")
		}
	}
	share.reasons(starts)
	c.supplyDemand(snap, d)
	c.supplyBorrow(snap, d)
	return starts
}

// snapshot is what lib/sched reads: the hosts with their load, the queues,
// the project quotas and shared resources, the running jobs and the
// candidates (c.mu held).
func (c *Controller) snapshot(now time.Time, cands []*rec) *sched.Snapshot {
	return c.snapshotOf(now, cands, c.hostNames)
}

// snapshotOf is snapshot with only the named hosts (ListHosts of a few:
// a view of every host would be built for each bhosts NAME).
func (c *Controller) snapshotOf(now time.Time, cands []*rec, names []string) *sched.Snapshot {
	conf := c.config()
	schema := conf.Schema()
	snap := &sched.Snapshot{Now: now, Schema: schema}
	local := c.local()

	for _, name := range names {
		snap.Hosts = append(snap.Hosts, c.schedHost(c.hosts[name], schema))
	}
	snap.HostGroups = policy.HostGroups(conf)
	snap.Queues = policy.Queues(conf, c.fairUsage(conf))
	snap.Limits = policy.Limits(conf) // configured limits first: Limits counts on it
	snap.UserGroups = policy.UserGroups(conf)
	snap.Shared = policy.Shared(conf)
	c.addBorrowed(conf, snap.Shared)
	snap.CU = policy.ComputeUnits(conf)
	snap.Preempt = policy.PreemptParams(conf)
	snap.Running = c.runningAllocs(conf)
	for _, r := range cands {
		hosts := r.eff.hosts
		if away := c.staleHosts(key{r.job.JobId, r.job.ArrayIndex}); away != nil {
			// An old instance still ends on those hosts.
			if len(hosts) == 0 {
				hosts = []string{"all"}
			}
			hosts = append(slices.Clone(hosts), away...)
		}
		snap.Jobs = append(snap.Jobs, policy.Job(conf, sched.JobKey{ID: r.job.JobId, Index: r.job.ArrayIndex}, r.eff,
			c.parsedReq(r), local, hosts, time.Unix(0, r.job.SubmitTime)))
	}
	c.snapRsvs(snap, now)
	c.snapJobGroups(snap)
	c.snapClaims(snap)
	return snap
}

// runningAllocs are the running jobs as the scheduler charges them
// (c.mu held).
func (c *Controller) runningAllocs(conf *config.Config) []sched.Alloc {
	var out []sched.Alloc
	for _, r := range c.running {
		k := sched.JobKey{ID: r.job.JobId, Index: r.job.ArrayIndex}
		a := policy.Alloc(conf, k, r.eff, time.Unix(0, r.job.StartTime))
		a.Preempt = allocPreempt(r.job)
		rusage := policy.Rusage(c.parsedReq(r))
		a.CUExcl = policy.CUExcl(conf, c.parsedReq(r))
		var used map[string]float64
		if u := c.used[key{r.job.JobId, r.job.ArrayIndex}]; u != nil && u.MemKb > 0 {
			used = map[string]float64{"mem": float64(u.MemKb) / 1024}
		}
		for i, hs := range r.job.ExecHosts {
			a.Hosts = append(a.Hosts, sched.HostAlloc{Host: hs.Host, Slots: int(hs.Slots), Rusage: rusage, Lead: i == 0, Used: used,
				GPU: heldGPUs(hs), CPUs: heldCPUs(hs), Instances: heldInstances(hs)})
		}
		out = append(out, a)
	}
	return out
}

// heldGPUs is what a running job holds of a host's GPUs, as its record
// keeps it (nil: none), so that the devices stay held across restarts.
func heldGPUs(hs *api.HostSlots) *sched.GPUAlloc {
	if len(hs.Gpus) == 0 {
		return nil
	}
	g := &sched.GPUAlloc{Exclusive: hs.GpuExclusive, Mem: hs.GpuMemMb}
	for _, d := range hs.Gpus {
		g.Devices = append(g.Devices, int(d))
	}
	return g
}

// hostType is the local host's type: its host entry's type in xce.toml,
// else the detected one. It is also what `type == local` means: in one
// host, the submission host is this host.
func (c *Controller) hostType() string {
	if hc := c.config().Hosts[c.cfg.Host]; hc != nil && hc.Type != "" {
		return hc.Type
	}
	return hostload.DetectedType()
}

// hostModel is the local host's model, configured or detected.
func (c *Controller) hostModel() string {
	if hc := c.config().Hosts[c.cfg.Host]; hc != nil && hc.Model != "" {
		return hc.Model
	}
	return hostload.DetectedModel()
}

// local is what `type == local` and `model == local` mean.
func (c *Controller) local() resreq.Local {
	return resreq.Local{Type: c.hostType(), Model: c.hostModel()}
}

// parsedReq is a job's effective resource requirement, parsed once per
// distinct string (c.mu held).
func (c *Controller) parsedReq(r *rec) *resreq.ResReq {
	s := r.eff.resReq
	if s == "" {
		return nil
	}
	if req, ok := c.reqs[s]; ok {
		return req
	}
	req, err := resreq.Parse(s, resreq.WithSchema(c.config().Schema()))
	if err != nil {
		slog.Warn("effective requirement does not parse", "job", r.job.JobId, "res_req", s, "err", err)
		req = nil
	}
	c.reqs[s] = req
	return req
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
	if a.job.Order != b.job.Order { // btop / bbot
		return a.job.Order < b.job.Order
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
		if lim := c.config().Cluster.LocalMaxPreexecRetry; lim > 0 && int(r.job.PreExecFailures) >= lim {
			return reasonPreExecLimit
		}
		return reasonUserHold
	case api.JobState_PEND:
	case api.JobState_SSUSP:
		return r.job.SuspReason
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

// limitUsage adds up the started jobs' use of every limit (c.mu held).
func (c *Controller) limitUsage() policy.LimitUse {
	u := policy.LimitUse{}
	for _, r := range c.running {
		u.Take(r.eff.limits, r.eff.GetUser(), int(r.job.AllocSlots))
	}
	return u
}

// fairUsage is each user's past use of each fairshare queue, from the
// finished jobs the controller still holds (the clean period): their CPU
// and run time, as of the latest end. lib/sched decays it and adds the run
// time of running jobs itself (c.mu held).
func (c *Controller) fairUsage(conf *config.Config) map[string]map[string]sched.FairUsage {
	var out map[string]map[string]sched.FairUsage
	if !anyFairshare(conf) {
		return nil // no walk over the finished jobs at every cycle
	}
	for _, r := range c.jobs {
		q := r.eff.GetQueue()
		if !isFinished(r.job.State) || r.job.StartTime == 0 || conf.Queues[q] == nil || len(conf.Queues[q].Fairshare) == 0 {
			continue
		}
		if out == nil {
			out = map[string]map[string]sched.FairUsage{}
		}
		if out[q] == nil {
			out[q] = map[string]sched.FairUsage{}
		}
		acct := policy.FairAccount(conf, q, r.eff.GetUserGroup())
		if acct == "" {
			acct = r.eff.GetUser()
		}
		out[q][acct] = policy.AddFinished(out[q][acct], time.Duration(r.job.GetUsage().GetCpuTimeMs())*time.Millisecond,
			time.Unix(0, r.job.StartTime), time.Unix(0, r.job.EndTime), int(r.job.AllocSlots))
	}
	return out
}

// orphan ends a pending job whose dependency can never be met, as LSF's
// orphan job termination does: at once with bsub -ti, else once it has
// been an orphan for the cluster's orphan_job_term_grace_period (never
// when that is 0). The change is committed with the cycle's dispatches.
func (c *Controller) orphan(r *rec, now time.Time) {
	k := key{r.job.JobId, r.job.ArrayIndex}
	since, seen := c.orphanSince[k]
	if !seen {
		if c.orphanSince == nil {
			c.orphanSince = map[key]time.Time{}
		}
		since = now
		c.orphanSince[k] = now
	}
	grace := time.Duration(c.config().Cluster.OrphanJobTermGracePeriod) * time.Second
	if !r.eff.GetTerminateOrphan() && (grace <= 0 || now.Sub(since) < grace) {
		return
	}
	delete(c.orphanSince, k)
	nj := c.clone(r)
	nj.State = api.JobState_EXIT
	nj.EndTime = now.UnixNano()
	nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_ORPHAN_SYSTEM, true
	ev := c.event(nj, api.EventType_FINISH, "", reasonDepNever)
	ev.State, ev.TermReason = nj.State, nj.TermReason
	c.orphans = append(c.orphans, store.Change{Job: nj, Event: ev})
}

// ineligible reports whether a pending job waits for something other than
// resources and its turn (LSF's ineligible pending state, bjobs -pi): it
// is held, its start time or dependency has not come, or its queue is
// inactive or gone.
func ineligible(r *rec) bool {
	switch r.job.State {
	case api.JobState_PSUSP:
		return true
	case api.JobState_PEND:
		switch r.why {
		case reasonBegin, reasonDepWait, reasonDepNever, reasonInactive, reasonLost:
			return true
		}
	}
	return false
}

// waitsRegardless reports whether a pending job cannot start whatever the
// slots, with the reason in r.why: its queue is inactive or gone, its
// start time has not come, or its dependency is not (or can never be)
// met; an orphan's end is arranged (c.orphan).
func (c *Controller) waitsRegardless(r *rec, now time.Time) bool {
	if q := c.queues[r.eff.GetQueue()]; q != nil && !q.q.Active {
		r.why = reasonInactive
		if q.q.LostAndFound {
			r.why = reasonLost
		}
		return true
	}
	if bt := r.eff.GetBeginTime(); bt > 0 && now.Unix() < bt {
		r.why = reasonBegin
		return true
	}
	if r.job.PreExecFailures > 0 {
		k := key{r.job.JobId, r.job.ArrayIndex}
		if at, ok := c.preExecRetryAt[k]; ok {
			if now.Before(at) {
				r.why = reasonPreExec
				return true
			}
			delete(c.preExecRetryAt, k)
		}
	}
	if sf, ok := c.startRetry[key{r.job.JobId, r.job.ArrayIndex}]; ok {
		if now.Before(sf.at) {
			r.why = sf.why
			return true
		}
		delete(c.startRetry, key{r.job.JobId, r.job.ArrayIndex})
	}
	if dep := r.eff.GetDependency(); dep != "" {
		switch c.dependencyMet(r, dep) {
		case depWait:
			r.why = reasonDepWait
			return true
		case depNever:
			r.why = reasonDepNever
			c.orphan(r, now)
			return true
		}
		delete(c.orphanSince, key{r.job.JobId, r.job.ArrayIndex})
	}
	return false
}
