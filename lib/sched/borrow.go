package sched

import (
	"math"
	"time"
)

// Pool is a shared resource (Snapshot.Shared) that a provider can lend
// more units of, as ComputeBorrow sees it.
type Pool struct {
	Name string
	// Pending is the units asked of the provider and not granted yet:
	// the borrow is net of them (they are not in Snapshot.Shared).
	Pending int
	// Free is how many more units may be asked for: borrow_max less
	// every unit borrowed or asked for.
	Free int
}

// Borrow is what the jobs a cycle left pending need of the pools.
type Borrow struct {
	// Units is, per pool, how many more units to borrow (never more than
	// its Free); pools that need none are absent.
	Units map[string]int
	// Jobs are the jobs that would start with the raised totals, each
	// with the pools (in the order given) whose units it would hold: they
	// wait for those units (the controller's pending reason).
	Jobs map[JobKey][]string
}

// ComputeBorrow tries the jobs that the decision d of snapshot s left
// pending again with each pool's total raised by its Pending and Free
// units, in a second cycle over the same hosts, queues and limits (the
// hosts charged with the running jobs and d's placements), and counts
// the units the jobs placed there need beyond the total: a job that
// waits only for tokens makes the pool borrow, one that waits for a host
// as well does not. Templates (ComputeDemand) are not tried here: a job
// needs a real host to borrow for. The snapshot and decision are not
// modified.
func ComputeBorrow(s *Snapshot, d *Decision, pools []Pool) *Borrow {
	out := &Borrow{Units: map[string]int{}, Jobs: map[JobKey][]string{}}
	if len(pools) == 0 {
		return out
	}
	byKey := make(map[JobKey]*Job, len(s.Jobs))
	for i := range s.Jobs {
		byKey[s.Jobs[i].Key] = &s.Jobs[i]
	}
	vs := *s
	vs.NoReasons, vs.OnlyPlacements, vs.Scratch, vs.Ledger = true, false, nil, nil
	vs.Running = withPlacements(s.Running, d.Placements, byKey, s.Now)
	vs.Shared = make(map[string]float64, len(s.Shared))
	for k, v := range s.Shared {
		vs.Shared[k] = v
	}
	raise := false
	for _, p := range pools {
		if _, ok := s.Shared[p.Name]; !ok {
			continue
		}
		if n := p.Pending + max(0, p.Free); n > 0 {
			vs.Shared[p.Name] += float64(n)
			raise = true
		}
	}
	placed := make(map[JobKey]bool, len(d.Placements))
	for _, p := range d.Placements {
		placed[p.Job] = true
	}
	vs.Jobs = nil
	for _, j := range s.Jobs {
		if !placed[j.Key] {
			vs.Jobs = append(vs.Jobs, j)
		}
	}
	if !raise || len(vs.Jobs) == 0 {
		return out
	}
	vd := Schedule(&vs)
	if len(vd.Placements) == 0 {
		return out
	}
	for _, pl := range vd.Placements {
		for _, p := range pools {
			if _, ok := s.Shared[p.Name]; ok && p.Pending+max(0, p.Free) > 0 && holds(pl.Hosts, p.Name) {
				out.Jobs[pl.Job] = append(out.Jobs[pl.Job], p.Name)
			}
		}
	}
	after := vs
	after.Running = withPlacements(vs.Running, vd.Placements, byKey, s.Now)
	used := Look(&after).SharedReserved
	for _, p := range pools {
		total, ok := s.Shared[p.Name]
		if !ok {
			continue
		}
		need := int(math.Ceil(used[p.Name]-total-1e-9)) - p.Pending
		if n := min(need, max(0, p.Free)); n > 0 {
			out.Units[p.Name] = n
		}
	}
	return out
}

// withPlacements is running with a cycle's placements added as jobs that
// start now.
func withPlacements(running []Alloc, ps []Placement, jobs map[JobKey]*Job, now time.Time) []Alloc {
	out := make([]Alloc, 0, len(running)+len(ps))
	out = append(out, running...)
	for _, p := range ps {
		j := jobs[p.Job]
		if j == nil {
			continue
		}
		out = append(out, Alloc{Job: j.Key, User: j.User, Queue: j.Queue, Project: j.Project,
			App: j.App, LicProject: j.LicProject, Account: j.Account, Start: now, RunLimit: j.RunLimit,
			Exclusive: j.Exclusive, Hosts: p.Hosts, JobGroup: j.JobGroup})
	}
	return out
}

// holds reports whether an allocation holds units of the shared resource.
func holds(hosts []HostAlloc, name string) bool {
	for _, ha := range hosts {
		if amount(ha.Rusage, name, 0, ha.Slots, ha.Lead, true) > 0 {
			return true
		}
	}
	return false
}
