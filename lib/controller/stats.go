package controller

import (
	"slices"
	"sync/atomic"
	"time"

	"xce/lib/api"
)

// Counts for metrics (lib/metrics) and badmin perfmon, kept as jobs
// change rather than computed from the jobs when asked: a scrape of a
// controller with 100,000 jobs copies a few dozen numbers under c.mu, it
// does not walk the jobs. The hooks are in insert, commit and clean,
// where every record enters, changes and leaves.

// statKey groups the jobs counted together.
type statKey struct {
	state       api.JobState
	queue, user string
}

// statVal is what a group holds: jobs, their slots (allocated while
// running or suspended, asked for while pending) and their GPUs.
type statVal struct{ jobs, slots, gpus int64 }

// jobStats are the counts (c.mu held for the map; the totals are atomic,
// so that the RPC path and perfmon read them without it).
type jobStats struct {
	groups map[statKey]*statVal
	// Totals since the controller started, for the _total counters and
	// perfmon's per-period counts.
	submitted, dispatched atomic.Int64
	finished              [2]atomic.Int64 // DONE, EXIT
	// The last scheduling cycle's candidates and lib/sched's buckets of
	// them (jobs with identical requirements placed together).
	candidates, buckets int
}

// count adds (sign 1) or removes (sign -1) a job's record (c.mu held).
func (s *jobStats) count(j *api.Job, e *effSpec, sign int64) {
	if s.groups == nil {
		s.groups = map[statKey]*statVal{}
	}
	k := statKey{j.State, e.GetQueue(), e.GetUser()}
	v := s.groups[k]
	if v == nil {
		v = &statVal{}
		s.groups[k] = v
	}
	slots := int64(j.AllocSlots)
	if slots == 0 && !isRunning(j.State) && !isFinished(j.State) {
		slots = int64(max(e.GetMinTasks(), 1))
	}
	var gpus int64
	for _, h := range j.ExecHosts {
		gpus += int64(len(h.Gpus))
	}
	v.jobs += sign
	v.slots += sign * slots
	v.gpus += sign * gpus
	if v.jobs == 0 {
		delete(s.groups, k)
	}
}

// changed accounts for a record's change from old to nj (c.mu held).
func (s *jobStats) changed(old, nj *api.Job, e *effSpec) {
	s.count(old, e, -1)
	s.count(nj, e, 1)
	if isFinished(nj.State) && !isFinished(old.State) {
		s.finished[finishedIndex(nj.State)].Add(1)
	}
	if isRunning(nj.State) && old.State == api.JobState_PEND {
		s.dispatched.Add(1)
	}
}

func finishedIndex(s api.JobState) int {
	if s == api.JobState_EXIT {
		return 1
	}
	return 0
}

// JobGroup is the jobs of one state, queue and user.
type JobGroup struct {
	State       api.JobState
	Queue, User string
	Jobs        int64
	Slots       int64 // allocated (running, suspended) or asked for (pending)
	GPUs        int64 // allocated
}

// HostStat is one execution host's state and slots.
type HostStat struct {
	Name   string
	Status string // as bhosts prints it: ok, closed_Full, unavail...
	Slots  int
	Used   int
}

// Stats is what the controller counts, as metrics show it.
type Stats struct {
	Jobs  []JobGroup
	Hosts []HostStat
	// Since the controller started (this term, under HA).
	Submitted, Dispatched int64
	Done, Exit            int64
	// The last scheduling cycle.
	LastCycle           time.Time
	Candidates, Buckets int
	Started             time.Time
}

// Stats copies the counts: a few entries per state, queue and user and
// one per host, whatever the number of jobs.
func (c *Controller) Stats() *Stats {
	s := &Stats{
		Submitted:  c.stats.submitted.Load(),
		Dispatched: c.stats.dispatched.Load(),
		Done:       c.stats.finished[0].Load(),
		Exit:       c.stats.finished[1].Load(),
		Started:    c.started,
	}
	c.mu.Lock()
	s.Jobs = make([]JobGroup, 0, len(c.stats.groups))
	for k, v := range c.stats.groups {
		s.Jobs = append(s.Jobs, JobGroup{State: k.state, Queue: k.queue, User: k.user, Jobs: v.jobs, Slots: v.slots, GPUs: v.gpus})
	}
	s.Hosts = make([]HostStat, 0, len(c.hostNames))
	cuHeld := c.cuExclHosts(c.config())
	for _, name := range c.hostNames {
		h := c.hosts[name]
		st, status := c.hostStatus(h)
		_, status = cuExclStatus(st, status, cuHeld[name])
		s.Hosts = append(s.Hosts, HostStat{Name: name, Status: status, Slots: h.slots, Used: h.used})
	}
	s.LastCycle, s.Candidates, s.Buckets = c.lastCycle, c.stats.candidates, c.stats.buckets
	c.mu.Unlock()
	slices.SortFunc(s.Jobs, func(a, b JobGroup) int {
		if a.Queue != b.Queue {
			return cmpString(a.Queue, b.Queue)
		}
		if a.User != b.User {
			return cmpString(a.User, b.User)
		}
		return int(a.State - b.State)
	})
	return s
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
