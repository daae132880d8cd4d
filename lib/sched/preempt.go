package sched

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Preemption (LSF 10.1 queue-based preemptive scheduling), decided inside
// the cycle so that the simulator replays it:
//
//   - Who preempts whom: a queue's Preemptive list names the queues whose
//     jobs its jobs may preempt ("q+N": N is LSF's preference level, the
//     higher preempted first; "lower", or LSF's empty PREEMPTIVE[], is
//     every queue of lower priority); a queue's Preemptable list names the
//     queues that may preempt it ("higher": every queue of higher
//     priority, preemptive or not). Either relation is enough, and only a
//     queue of higher priority ever preempts.
//   - When: a job that does not fit now (after every alternative was
//     tried) looks for victims among the running jobs its queue may
//     preempt, on the hosts that pass its static checks, host by host in
//     its order[]. On each host the victims are taken in LSF's order (the
//     highest preference level, then the lowest queue priority, then the
//     most recently started; with PREEMPT_FOR=LEAST_RUN_TIME the shortest
//     run first) and only while they increase what the host can give the
//     job: a victim that frees nothing the job needs (slots, or the
//     resources of Preempt.Resources) stays running. If the job then
//     fits, it is placed with its victims (Placement.Victims); victims
//     released on hosts the placement does not use are kept running. If
//     it does not fit, nothing is preempted.
//   - Not a victim: an exclusive job (unless PREEMPT_JOBTYPE=EXCLUSIVE),
//     a job that started backfilling a reservation (unless
//     PREEMPT_JOBTYPE=BACKFILL; Placement.Backfill), a job preempted MaxJobPreempt times already, a job younger than
//     NO_PREEMPT_RUN_TIME or within NO_PREEMPT_FINISH_TIME of its run
//     limit, and a preemptor younger than PREEMPT_DELAY preempts nothing.
//   - A suspended victim (Alloc.Preempt.Suspended) holds no host slots, and no
//     amount of the resources named in Preempt.Resources (PREEMPTABLE_
//     RESOURCES); it keeps the rest (memory, GPUs, cores by default), as
//     LSF's suspended jobs do. It resumes (Decision.Resumes) at its
//     queue's turn, before the queue's pending jobs, once its hosts have
//     its slots (and released amounts) free again: a suspended job never
//     waits behind a pending job of the same or a lower priority, and a
//     job of a higher-priority queue (the preemptor) is always placed
//     before it. One that cannot resume yet holds what is free of its
//     slots from its queue's turn on, so that lower queues do not take
//     them (higher queues may, in the next cycle).
//
//   - Limits: a suspended victim leaves the slot counts of the limits
//     LSF leaves it out of (preempt_limits.go: a host's slots, a user's
//     total, and what PREEMPT_FOR adds); a job held back by one of those
//     preempts the jobs counted in it; a job resumes only within every
//     limit and its queue's slot limits, as a dispatch would.
//
// Choices where LSF is silent or where XCE is simpler: a compound
// requirement ({..} + {..}) preempts when victims can be found for every
// part, each part counting the slots the parts before it found (its GPUs
// and amounts are checked by the placement, which may then fail and
// preempt nothing); victims are only as many as needed (LSF's MINI_JOB
// always); cores of hosts that bind
// jobs to cores stay held by a suspended job (LSF's default, affinity
// resources kept).

// QueuePreempt is a queue's preemption policy.
type QueuePreempt struct {
	// Preemptive: queues whose jobs this queue's jobs may preempt, each
	// "name" or "name+N" (N the preference level); "lower": every queue of
	// lower priority.
	Preemptive []string
	// Preemptable: queues whose jobs may preempt this queue's; "higher":
	// every queue of higher priority.
	Preemptable []string
	// MaxJobPreempt: a job of this queue preempted that many times runs
	// to completion (MAX_JOB_PREEMPT); 0 no limit.
	MaxJobPreempt int
	// NoPreemptRunTime: this queue's jobs that have run less are not
	// preempted; NoPreemptFinishTime: nor those that would reach their
	// run limit within it (NO_PREEMPT_RUN_TIME, NO_PREEMPT_FINISH_TIME).
	// Percent variants: of the job's run limit.
	NoPreemptRunTime, NoPreemptFinishTime       time.Duration
	NoPreemptRunPercent, NoPreemptFinishPercent float64
	// Delay: this queue's jobs preempt only once pending that long
	// (PREEMPT_DELAY).
	Delay time.Duration
}

// PreemptParams are the cluster-wide preemption parameters (lsb.params).
type PreemptParams struct {
	// Resources a suspended victim gives back besides its slots
	// (PREEMPTABLE_RESOURCES): "mem", "ngpus_physical", licence tokens
	// (shared resources), other host counters.
	Resources []string
	// Exclusive and Backfill (PREEMPT_JOBTYPE): exclusive jobs, and jobs
	// that started backfilling a reservation (AllocPreempt.Backfill), may
	// be preempted too.
	Exclusive, Backfill bool
	// LeastRunTime (PREEMPT_FOR=LEAST_RUN_TIME): victims by the shortest
	// run first instead of by priority.
	LeastRunTime bool
	// PREEMPT_FOR's slot limit keywords: suspended jobs leave the slot
	// counts of a user group's total limit (GroupMax), a user group's
	// per-processor limit (GroupJLP), a user's per-processor limit
	// (UserJLP) and a user's or user group's per-host limit (HostJLU);
	// see preempt_limits.go.
	GroupMax, GroupJLP, UserJLP, HostJLU bool
	// MiniJob (PREEMPT_FOR=MINI_JOB): preempt only enough jobs for a
	// parallel job, which XCE always does. OptimalMiniJob
	// (OPTIMAL_MINI_JOB): on each host, the victims that free the most
	// slots first, so that the fewest jobs are suspended.
	MiniJob, OptimalMiniJob bool
}

// AllocPreempt is a running job's preemption state.
type AllocPreempt struct {
	// Suspended: the job is suspended by preemption (SSUSP) and holds no
	// slots.
	Suspended bool
	// Count is how many times the job was preempted.
	Count int
	// Stopped: a suspended victim its user stopped since (bstop, USUSP):
	// it holds no slots either, and is not resumed until its user's
	// bresume makes it SSUSP again.
	Stopped bool
	// Backfill: the job started in slots reserved for another job
	// (Placement.Backfill); preempted only with PREEMPT_JOBTYPE=BACKFILL.
	Backfill bool
}

// preState is a cycle's preemption state, built on first use.
type preState struct {
	// rel are the queues each queue may preempt, with the preference
	// level.
	rel    map[string]map[string]int
	built  bool
	byHost [][]int      // candidate victims (indices in Snapshot.Running) per host
	gone   map[int]bool // victims taken this cycle
	// victims are those of this cycle's placements (taken: the same, as
	// a set).
	victims []int
	taken   map[int]bool
	onHost  map[string][]int // running jobs by host (exclOther)
	// susp are the suspended jobs (indices in Snapshot.Running) per queue.
	susp  map[string][]int
	resOf map[string]bool // Preempt.Resources
	qprio map[string]int
	// limFree are the limits whose slot counts leave suspended jobs out
	// (preempt_limits.go).
	limFree map[*limitState]bool
	// rsvByHost are the candidates for reservations (resv_susp.go), and
	// rsvMode the reservation whose job looks for victims now.
	rsvByHost [][]int
	rsvMode   *advRsv
}

// cands is the candidate list of host h for the victims looked for now.
func (ps *preState) cands(h int) *[]int {
	if ps.rsvMode != nil {
		return &ps.rsvByHost[h]
	}
	return &ps.byHost[h]
}

// preemptSetup releases what the suspended victims of the snapshot do not
// hold (called once the running jobs are accounted) and indexes them by
// queue for resume.
func (c *cycle) preemptSetup() {
	s := c.s
	ps := c.newPreState() // cyclemaps.go
	for _, r := range s.Preempt.Resources {
		ps.resOf[r] = true
	}
	ps.limFree = c.limitsFreed()
	for i := range s.Queues {
		ps.qprio[s.Queues[i].Name] = s.Queues[i].Priority
	}
	c.pre = ps
	for i := range s.Running {
		if s.Running[i].Preempt.Suspended {
			c.release(&s.Running[i], 1)
			if s.Running[i].Preempt.Stopped {
				continue
			}
			q := s.Running[i].Queue
			ps.susp[q] = append(ps.susp[q], i)
		}
	}
	ps.rel = preemptRelations(s.Queues)
}

// preemptRelations maps each queue to the queues it may preempt and the
// preference level of each.
func preemptRelations(qs []Queue) map[string]map[string]int {
	var rel map[string]map[string]int // nil: none (most sites)
	add := func(hi, lo string, pref int) {
		if rel == nil {
			rel = map[string]map[string]int{}
		}
		m := rel[hi]
		if m == nil {
			m = map[string]int{}
			rel[hi] = m
		}
		if old, ok := m[lo]; !ok || pref > old {
			m[lo] = pref
		}
	}
	for i := range qs {
		q := &qs[i]
		for _, e := range q.Preempt.Preemptive {
			name, pref := splitPref(e)
			for k := range qs {
				o := &qs[k]
				if o.Priority < q.Priority && (name == "lower" || name == o.Name) {
					add(q.Name, o.Name, pref)
				}
			}
		}
		for _, e := range q.Preempt.Preemptable {
			name, _ := splitPref(e)
			for k := range qs {
				o := &qs[k]
				if o.Priority > q.Priority && (name == "higher" || name == o.Name) {
					add(o.Name, q.Name, 0)
				}
			}
		}
	}
	return rel
}

// splitPref splits "queue+N" into the queue and N (0 without).
func splitPref(e string) (string, int) {
	name, p, ok := strings.Cut(e, "+")
	if !ok {
		return e, 0
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return e, 0
	}
	return name, n
}

// buildVictims indexes, per host, the running jobs some queue may
// preempt.
func (c *cycle) buildVictims() {
	ps := c.pre
	ps.built = true
	ps.byHost = make([][]int, len(c.hosts))
	victimQueue := map[string]bool{}
	for _, m := range ps.rel {
		for q := range m {
			victimQueue[q] = true
		}
	}
	maxOf := map[string]int{}
	for i := range c.s.Queues {
		maxOf[c.s.Queues[i].Name] = c.s.Queues[i].Preempt.MaxJobPreempt
	}
	for i := range c.s.Running {
		a := &c.s.Running[i]
		if a.Preempt.Suspended || !victimQueue[a.Queue] || a.Exclusive && !c.s.Preempt.Exclusive ||
			a.Preempt.Backfill && !c.s.Preempt.Backfill {
			continue
		}
		if mx := maxOf[a.Queue]; mx > 0 && a.Preempt.Count >= mx {
			continue
		}
		if !c.oldEnough(a) {
			continue
		}
		for _, ha := range a.Hosts {
			if h, ok := c.byName[ha.Host]; ok {
				ps.byHost[h] = append(ps.byHost[h], i)
			}
		}
	}
}

// oldEnough applies NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME of the
// job's queue.
func (c *cycle) oldEnough(a *Alloc) bool {
	qs := c.queues[a.Queue]
	if qs == nil {
		return true
	}
	p := &qs.q.Preempt
	ran := c.now.Sub(a.Start)
	if p.NoPreemptRunTime > 0 && ran < p.NoPreemptRunTime {
		return false
	}
	if p.NoPreemptRunPercent > 0 && a.RunLimit > 0 && float64(ran) < float64(a.RunLimit)*p.NoPreemptRunPercent/100 {
		return false
	}
	if a.RunLimit > 0 {
		left := a.RunLimit - ran
		if p.NoPreemptFinishTime > 0 && left < p.NoPreemptFinishTime {
			return false
		}
		if p.NoPreemptFinishPercent > 0 && float64(left) < float64(a.RunLimit)*p.NoPreemptFinishPercent/100 {
			return false
		}
	}
	return true
}

// release takes a running job's slots (and the amounts of Preempt.
// Resources) off the cycle's accounting (sign 1), as a suspended victim
// holds them, or charges them again (sign -1). It mirrors account for
// those parts.
func (c *cycle) release(a *Alloc, sign int) {
	rel := c.pre.resOf
	v := allocConsumers(a)
	end := int64(never)
	if a.RunLimit > 0 {
		end = a.Start.Add(a.RunLimit).UnixNano()
	}
	elapsed := c.now.Sub(a.Start)
	total := 0
	for _, ha := range a.Hosts {
		total += ha.Slots
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if _, ok := c.s.Shared[r.Name]; ok && rel[r.Name] {
					c.shared[r.Name] += float64(sign) * amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, true)
				}
			}
		}
		h, ok := c.byName[ha.Host]
		if !ok {
			continue
		}
		hs := &c.hosts[h]
		hs.used -= sign * ha.Slots
		hs.uses = append(hs.uses, use{end: end, slots: -sign * ha.Slots})
		if a.Exclusive {
			hs.excl = sign < 0 || c.exclOther(a, ha.Host, -1)
		}
		if g := ha.GPU; g != nil && hs.gpus != nil && rel[ngpusPhysical] {
			if sign < 0 {
				hs.gpus.holdDevices(g)
			} else {
				hs.gpus.releaseDevices(g, func(idx int) bool { return c.exclOther(a, ha.Host, idx) })
			}
		}
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if _, ok := c.s.Shared[r.Name]; ok || !rel[r.Name] {
					continue
				}
				if hs.gpus != nil && r.Name == ngpusPhysical {
					continue
				}
				ri := c.resIndex(r.Name)
				a := amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, false)
				charge := a
				if c.resInfo[ri].gauge {
					charge = max(0, a-ha.Used[r.Name])
				}
				hs.avail[ri] += float64(sign) * charge
			}
		}
	}
	for _, ls := range c.matching(&v) {
		slotsFree := c.pre.limFree[ls] // preempt_limits.go
		// A limit on hosts counts running jobs only in JOBS (LSF).
		jobsFree := ls.perHost || ls.hosts != nil
		k := ls.key(&v)
		for _, ha := range a.Hosts {
			h, ok := c.byName[ha.Host]
			if !ok || (ls.hosts != nil && !ls.hosts[h]) {
				continue
			}
			host := ""
			if ls.perHost {
				host = ha.Host
			}
			n := ls.get(k, &v, host)
			if slotsFree {
				n.slots -= float64(sign * ha.Slots)
			}
			if jobsFree {
				n.jobs -= sign
				jobsFree = ls.perHost // a host list counts the job once
			}
			for r := range ls.resNames() {
				if !rel[r] {
					continue
				}
				amt := max(amount(ha.Rusage, r, elapsed, ha.Slots, ha.Lead, false), ha.Used[r])
				if amt != 0 && n.res != nil {
					n.res[r] -= float64(sign) * amt
				}
			}
		}
	}
	// The queue's own slot limits (QJOB_LIMIT, UJOB_LIMIT, HJOB_LIMIT)
	// count suspended jobs, as LSF's do; fairshare counts running slots.
	if qs := c.queues[a.Queue]; qs != nil && qs.q.Fairshare != nil {
		qs.slots[fairAccount(a.User, a.Account)] -= sign * total
	}
}

// resume gives back their slots to the queue's suspended victims that fit
// on their hosts again, the earliest started first, before the queue's
// pending jobs are tried. Those that do not fit (and the victims of this
// cycle) hold what is free of their slots for the rest of the cycle, so
// that no job of the same or a lower priority takes them: a suspended
// job waits only for jobs of higher priority.
func (c *cycle) resume(queue string) {
	ps := c.pre
	if ps == nil {
		return
	}
	list := ps.susp[queue]
	slices.SortStableFunc(list, func(x, y int) int {
		return c.s.Running[x].Start.Compare(c.s.Running[y].Start)
	})
	for _, i := range list {
		a := &c.s.Running[i]
		fits := c.fitsAgain(a)
		c.release(a, -1)
		if fits && !c.overLimits(a) {
			c.dec.Resumes = append(c.dec.Resumes, a.Job)
		}
	}
	for _, i := range ps.victims {
		if a := &c.s.Running[i]; a.Queue == queue {
			c.release(a, -1)
		}
	}
}

// fitsAgain reports whether a suspended job's hosts have its slots and
// released amounts free now.
func (c *cycle) fitsAgain(a *Alloc) bool {
	rel := c.pre.resOf
	elapsed := c.now.Sub(a.Start)
	for _, ha := range a.Hosts {
		h, ok := c.byName[ha.Host]
		if !ok {
			continue
		}
		hs := &c.hosts[h]
		mx := hs.h.MaxSlots
		if hs.excl || a.Exclusive && hs.used > 0 {
			return false
		}
		free := mx - hs.used - c.advHeldFor(h, a)
		for _, r := range hs.holds {
			free = min(free, mx-c.usageAt(hs, r.start))
		}
		if free < ha.Slots {
			return false
		}
		if g := ha.GPU; g != nil && hs.gpus != nil && rel[ngpusPhysical] && hs.gpus.devicesBusy(g) {
			return false
		}
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if !rel[r.Name] || hs.gpus != nil && r.Name == ngpusPhysical {
					continue
				}
				if _, ok := c.s.Shared[r.Name]; ok {
					if c.shared[r.Name]+1e-9 < amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, true) {
						return false
					}
					continue
				}
				ri := c.resIndex(r.Name)
				amt := amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, false)
				if c.resInfo[ri].gauge {
					amt = max(0, amt-ha.Used[r.Name])
				}
				if hs.avail[ri]+1e-9 < amt {
					return false
				}
			}
		}
	}
	return true
}

// victimsOn returns the jobs on host h that a job of queue q may preempt
// now, in the order they are taken.
func (c *cycle) victimsOn(h int, q string) []int {
	ps := c.pre
	if ps.rsvMode != nil {
		return c.rsvVictimsOn(h, ps.rsvMode)
	}
	rel := ps.rel[q]
	var out []int
	for _, i := range ps.byHost[h] {
		if _, ok := rel[c.s.Running[i].Queue]; ok && !ps.gone[i] {
			out = append(out, i)
		}
	}
	if len(out) < 2 {
		return out
	}
	order := c.victimOrder(rel)
	if c.s.Preempt.OptimalMiniJob {
		// The fewest victims: those that hold the most slots here first.
		name := c.hosts[h].h.Name
		on := func(i int) int {
			n := 0
			for _, ha := range c.s.Running[i].Hosts {
				if ha.Host == name {
					n += ha.Slots
				}
			}
			return n
		}
		slices.SortStableFunc(out, func(x, y int) int {
			if a, b := on(x), on(y); a != b {
				return b - a
			}
			return order(x, y)
		})
		return out
	}
	slices.SortStableFunc(out, order)
	return out
}

// victimOrder compares two candidate victims (indices in Snapshot.
// Running) for a preemptor whose queue may preempt rel: LSF's order.
func (c *cycle) victimOrder(rel map[string]int) func(x, y int) int {
	ps := c.pre
	return func(x, y int) int {
		a, b := &c.s.Running[x], &c.s.Running[y]
		if !c.s.Preempt.LeastRunTime {
			if pa, pb := rel[a.Queue], rel[b.Queue]; pa != pb {
				return pb - pa // the higher preference level first
			}
			if pa, pb := ps.qprio[a.Queue], ps.qprio[b.Queue]; pa != pb {
				return pa - pb // the lower priority first
			}
		}
		if n := b.Start.Compare(a.Start); n != 0 {
			return n // the most recently started first
		}
		if a.Job.ID != b.Job.ID {
			return int(b.Job.ID - a.Job.ID)
		}
		return int(b.Job.Index - a.Job.Index)
	}
}

// preempt tries to place job j of bucket b by preempting running jobs of
// the queues its queue may preempt (mx: the slots its limits allow;
// keep: victims already released for its limits, kept with the
// placement). Every part of a compound requirement ({..} + {..}) looks
// for victims in turn, each counting the slots the parts before it
// found; the placement then decides. It reports whether the job was
// placed.
func (c *cycle) preempt(b *bucket, j *Job, mx int, keep []int) bool {
	ps := c.pre
	if ps == nil {
		return false
	}
	// A job of a reservation whose window is open takes its victims among
	// the jobs on its slots (resv_susp.go).
	if x := c.advSuspender(b); x != nil {
		if ps.rsvByHost == nil {
			c.buildRsvVictims()
		}
		ps.rsvMode = x
		defer func() { ps.rsvMode = nil }()
	} else {
		if len(ps.rel[b.q.q.Name]) == 0 {
			return false
		}
		if d := b.q.q.Preempt.Delay; d > 0 && c.now.Sub(j.Submit) < d {
			return false
		}
		if !ps.built {
			c.buildVictims()
		}
	}
	for _, v := range b.variants {
		var released []int
		var ov overlay
		freed := make([][]int, len(v.parts))
		for k, p := range v.parts {
			lo := b.min
			if p.count > 0 {
				lo = p.count
			}
			rel, fr, counted := c.partVictims(b, p, lo, ov)
			released = append(released, rel...)
			freed[k] = fr
			if len(v.parts) > 1 {
				if ov == nil {
					ov = overlay{}
				}
				for h, n := range counted {
					if ov[h] == nil {
						ov[h] = &ovHost{}
					}
					ov[h].slots += n
				}
			}
		}
		if len(released) == 0 {
			continue
		}
		for k, p := range v.parts {
			// The hosts pruned from the bucket's list may have room now.
			if p.live != nil && len(freed[k]) > 0 {
				live := slices.Clone(freed[k])
				for _, h := range p.live {
					if !slices.Contains(freed[k], h) {
						live = append(live, h)
					}
				}
				p.live = live
			}
			if len(p.same) > 0 {
				p.groups = c.groups(p, p.all)
			}
		}
		has, n, _ := c.place(b, v, mx)
		if has == nil || c.limitOver(b, has) != nil {
			c.restore(released)
			continue
		}
		on := map[string]bool{}
		for _, ha := range has {
			on[ha.Host] = true
		}
		var victims []JobKey
		var spare []int
		for _, vi := range released {
			used := false
			for _, ha := range c.s.Running[vi].Hosts {
				used = used || on[ha.Host]
			}
			if used {
				victims = append(victims, c.s.Running[vi].Job)
				ps.victims = append(ps.victims, vi)
				ps.taken[vi] = true
			} else {
				spare = append(spare, vi)
			}
		}
		c.restore(spare)
		c.commit(b, j, v, has, n)
		c.dec.Placements[len(c.dec.Placements)-1].Victims = victims
		c.keepVictims(keep)
		return true
	}
	return false
}

// partVictims releases, host by host in part p's order, the victims that
// give p (lo slots, at least its per-host minimum on each host used)
// what it lacks, counting the slots ov already took (parts before it).
// It returns the victims released, the hosts where some were, and the
// slots it counted on each host.
func (c *cycle) partVictims(b *bucket, p *part, lo int, ov overlay) (released, freed []int, counted map[int]int) {
	ps := c.pre
	q := b.q.q.Name
	phm := perHostMin(p, lo)
	counted = map[int]int{}
	got := 0
	count := func(h, n int) {
		if p.span.Hosts == 1 {
			clear(counted)
			got = 0
		}
		n = min(n, lo-got)
		counted[h] += n
		got += n
	}
	if p.span.Hosts != 1 {
		for _, h := range p.live {
			if got >= lo {
				break
			}
			if len(*ps.cands(h)) == 0 {
				if n, _, _ := c.capNow(b, p, h, ov); n >= phm {
					count(h, n)
				}
			}
		}
	}
	for _, h := range p.all {
		if got >= lo {
			break
		}
		if len(*ps.cands(h)) == 0 {
			continue
		}
		cands := c.victimsOn(h, q)
		if len(cands) == 0 {
			// Forget the victims placements took here: later jobs skip
			// the host. (Those released for this job may yet be given
			// back.)
			l := ps.cands(h)
			*l = slices.DeleteFunc(*l, func(i int) bool { return ps.taken[i] })
			if n, _, _ := c.capNow(b, p, h, ov); n >= phm && (p.span.Hosts != 1 || n >= lo) {
				count(h, n)
			}
			continue
		}
		target := max(phm, lo-got)
		if pt := c.ptileOf(p, h); pt > 0 {
			target = min(pt, lo-got)
		}
		cur, _, _ := c.capNow(b, p, h, ov)
		before := cur
		var mine []int
		for _, vi := range cands {
			if cur >= target {
				break
			}
			helps := c.freesNeeded(p, h, vi, target+ov.slots(h))
			c.release(&c.s.Running[vi], 1)
			ps.gone[vi] = true
			if n, _, _ := c.capNow(b, p, h, ov); n > cur || helps {
				// helps: what it frees may count only with more
				// victims (two GPUs from two jobs); pruned below if
				// not.
				mine = append(mine, vi)
				cur = max(cur, n)
			} else {
				c.release(&c.s.Running[vi], -1)
				delete(ps.gone, vi)
			}
		}
		// Keep only the victims the capacity reached needs, the least
		// preferred given back first.
		switch {
		case cur <= before:
			c.restore(mine)
			mine = nil
		case len(mine) > 1:
			need := min(cur, target)
			for k := len(mine) - 1; k >= 0; k-- {
				vi := mine[k]
				c.restore([]int{vi})
				if n, _, _ := c.capNow(b, p, h, ov); n >= need {
					mine = slices.Delete(mine, k, k+1)
					continue
				}
				c.release(&c.s.Running[vi], 1)
				ps.gone[vi] = true
			}
			cur, _, _ = c.capNow(b, p, h, ov)
		}
		if cur < phm || p.span.Hosts == 1 && cur < lo {
			c.restore(mine)
			if before >= phm && p.span.Hosts != 1 {
				count(h, before)
			}
			continue
		}
		released = append(released, mine...)
		if len(mine) > 0 {
			freed = append(freed, h)
		}
		count(h, cur)
	}
	return released, freed, counted
}

// freesNeeded reports whether suspending running job vi gives back on
// host h something part p lacks there beyond slots that may count only
// with further victims: GPUs, or a resource of PREEMPTABLE_RESOURCES it
// reserves; or slots, while the host has fewer free than target.
func (c *cycle) freesNeeded(p *part, h, vi, target int) bool {
	rel := c.pre.resOf
	hs := &c.hosts[h]
	if !hs.excl && hs.h.MaxSlots-hs.used < target {
		return true
	}
	name := hs.h.Name
	for _, ha := range c.s.Running[vi].Hosts {
		if ha.Host != name {
			continue
		}
		if ha.GPU != nil && p.gpu != nil && rel[ngpusPhysical] {
			return true
		}
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if !rel[r.Name] {
					continue
				}
				for _, nd := range p.hneed {
					if nd.name == r.Name {
						return true
					}
				}
				for _, nd := range p.sneed {
					if nd.name == r.Name {
						return true
					}
				}
			}
		}
	}
	return false
}

// backfills reports whether a placement takes, on one of its hosts,
// slots that reservations hold for other jobs (called before it is
// charged): it backfills, ending before they start.
func (c *cycle) backfills(has []HostAlloc) bool {
	if c.nres == 0 {
		// No reservation made yet: no host holds slots (a cycle's holds
		// are its reservations', gone at the next cycle's restore).
		return false
	}
	for k := range has {
		h, ok := c.hostOf(has, k)
		if !ok {
			continue
		}
		hs := &c.hosts[h]
		if len(hs.holds) == 0 {
			continue
		}
		held := 0
		for _, r := range hs.holds {
			held += r.slots
		}
		if hs.h.MaxSlots-hs.used-held < has[k].Slots {
			return true
		}
	}
	return false
}

// exclOther reports whether a running job other than a, not suspended
// nor released this cycle, holds host (dev < 0) or its GPU dev
// exclusively: releasing a leaves that job's exclusive use in place
// (with PREEMPT_JOBTYPE=EXCLUSIVE an exclusive preemptor runs where its
// exclusive victim is suspended). Placements of this cycle are not
// looked at: they were made where a's use was already released.
func (c *cycle) exclOther(a *Alloc, host string, dev int) bool {
	ps := c.pre
	if ps.onHost == nil {
		// Built on first use: exclusive victims are rare.
		ps.onHost = map[string][]int{}
		for i := range c.s.Running {
			for _, ha := range c.s.Running[i].Hosts {
				ps.onHost[ha.Host] = append(ps.onHost[ha.Host], i)
			}
		}
	}
	for _, i := range ps.onHost[host] {
		o := &c.s.Running[i]
		if o == a || o.Preempt.Suspended || c.pre.gone[i] {
			continue
		}
		for _, ha := range o.Hosts {
			if ha.Host != host {
				continue
			}
			if dev < 0 && o.Exclusive {
				return true
			}
			if dev >= 0 && ha.GPU != nil && ha.GPU.Exclusive && slices.Contains(ha.GPU.Devices, dev) {
				return true
			}
		}
	}
	return false
}

// restore charges released victims again.
func (c *cycle) restore(list []int) {
	for _, vi := range list {
		c.release(&c.s.Running[vi], -1)
		delete(c.pre.gone, vi)
	}
}
