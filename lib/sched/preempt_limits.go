package sched

import "slices"

// Slot limits and preemption, as LSF counts the slots in use once
// preemptive scheduling is on:
//
//   - A host's job slots (MXJ) and an individual user's total slot limit
//     never count suspended jobs (a suspended victim gives its slots
//     back).
//   - PREEMPT_FOR's keywords leave them out of more limits: GROUP_MAX a
//     user group's total slot limit, GROUP_JLP a user group's
//     per-processor limit, USER_JLP a user's per-processor limit,
//     HOST_JLU a user's or user group's per-host limit.
//   - Every other limit counts them, and so do a queue's own slot limits
//     (QJOB_LIMIT, UJOB_LIMIT, HJOB_LIMIT) always.
//   - JOBS of a limit on hosts (HOSTS or PER_HOST) counts running jobs
//     only, so that it does not block preemption; other JOBS limits
//     count suspended jobs.
//
// "A user's limit" here is a limit whose only consumers are users (with
// or without hosts): a per-user limit, or one naming a single user; a
// user group's limit names a group (or several users) counted together.
// A limit that also names queues, projects, applications or licence
// projects is not a user's limit and counts suspended jobs.
//
// Because suspending a job frees its slots in the limits above, a job
// held back only by one of them preempts as it would for slots: the
// victims are taken (in LSF's order) from the jobs counted in the limits
// that hold it back (limitVictims), and a resumed job is checked against
// every limit again (overLimits), as a dispatch would be.

// limitsFreed classifies the cycle's limits: those whose slot counts
// leave suspended jobs out.
func (c *cycle) limitsFreed() map[*limitState]bool {
	var out map[*limitState]bool // nil: none
	p := &c.s.Preempt
	for _, ls := range c.limits {
		users := ls.m[kUser] != [2]*matcher{} || ls.per[kUser]
		others := false
		for k := kQueue; k < nKinds; k++ {
			others = others || ls.m[k] != [2]*matcher{} || ls.per[k]
		}
		if !users || others {
			continue
		}
		one := ls.per[kUser] || c.singleUser(ls.l.Users)
		var free bool
		switch {
		case ls.l.SlotsPerProcessor > 0 && ls.perHost:
			free = one && p.UserJLP || !one && p.GroupJLP
		case ls.perHost:
			free = p.HostJLU
		default:
			free = one || p.GroupMax
		}
		if free {
			if out == nil {
				out = map[*limitState]bool{}
			}
			out[ls] = true
		}
	}
	return out
}

// singleUser reports whether a limit's user list names one user (not a
// group, not "all", no exclusion).
func (c *cycle) singleUser(list []string) bool {
	if len(list) != 1 {
		return false
	}
	u := list[0]
	if u == "all" || u == "" || u[0] == '~' {
		return false
	}
	_, group := c.s.UserGroups[u]
	return !group
}

// overLimits reports whether a job being resumed, charged again, puts a
// limit or its queue's slot limits over (a resumed job is checked as a
// dispatch is).
func (c *cycle) overLimits(a *Alloc) bool {
	if qs := c.queues[a.Queue]; qs != nil {
		q := qs.q
		if q.SlotLimit > 0 && qs.used > q.SlotLimit || q.UserSlotLimit > 0 && qs.uused[a.User] > q.UserSlotLimit {
			return true
		}
		if q.HostSlotLimit > 0 {
			for _, ha := range a.Hosts {
				if h, ok := c.byName[ha.Host]; ok && c.hosts[h].qused[a.Queue] > q.HostSlotLimit {
					return true
				}
			}
		}
	}
	v := allocConsumers(a)
	over := func(n *count, slots, jobs int, res map[string]float64) bool {
		if slots != 0 && n.slots > float64(max(slots, 0))+1e-9 || jobs != 0 && n.jobs > max(jobs, 0) {
			return true
		}
		for r, lim := range res {
			if n.res[r] > lim+1e-9 {
				return true
			}
		}
		return false
	}
	for _, ls := range c.matching(&v) {
		k := ls.key(&v)
		if !ls.perHost {
			if over(ls.peek(k, ""), ls.l.Slots, ls.l.Jobs, ls.l.Resources) {
				return true
			}
			continue
		}
		for _, ha := range a.Hosts {
			h, ok := c.byName[ha.Host]
			if !ok || ls.hosts != nil && !ls.hosts[h] {
				continue
			}
			slots, res := c.hostLimits(ls, h)
			if over(ls.peek(k, ha.Host), slots, ls.l.Jobs, res) {
				return true
			}
		}
	}
	return false
}

// limitVictims suspends, for a job of bucket b that its job-wide limits
// hold back (limitCap below the job's minimum), the running jobs its
// queue may preempt that count in those limits, in LSF's order, until
// the limits let it start. It returns the victims released (nil: none
// would do, and nothing is released) and the slots the limits allow
// then.
func (c *cycle) limitVictims(b *bucket, j *Job) ([]int, int) {
	ps := c.pre
	q := b.q.q.Name
	if ps == nil || len(ps.rel[q]) == 0 {
		return nil, 0
	}
	if d := b.q.q.Preempt.Delay; d > 0 && c.now.Sub(j.Submit) < d {
		return nil, 0
	}
	if qq := b.q.q; qq.SlotLimit > 0 && qq.SlotLimit-b.q.used < b.min ||
		qq.UserSlotLimit > 0 && qq.UserSlotLimit-b.q.uused[b.user] < b.min {
		return nil, 0 // the queue's own limits count suspended jobs
	}
	var blocking []*limitState
	for _, ls := range b.lims {
		if !ls.perHost && ls.hosts == nil && ls.l.Slots != 0 && ps.limFree[ls] &&
			ls.peek(ls.key(&b.vals), "").slots+float64(b.min) > float64(max(ls.l.Slots, 0)) {
			blocking = append(blocking, ls)
		}
	}
	if len(blocking) == 0 {
		return nil, 0
	}
	if !ps.built {
		c.buildVictims()
	}
	rel := ps.rel[q]
	key := map[*limitState]string{}
	for _, ls := range blocking {
		key[ls] = ls.key(&b.vals)
	}
	seen := map[int]bool{}
	var cands []int
	for _, list := range ps.byHost {
		for _, i := range list {
			a := &c.s.Running[i]
			if seen[i] || ps.gone[i] {
				continue
			}
			seen[i] = true
			if _, ok := rel[a.Queue]; !ok {
				continue
			}
			v := allocConsumers(a)
			for _, ls := range blocking {
				if ls.matches(&v) && ls.key(&v) == key[ls] {
					cands = append(cands, i)
					break
				}
			}
		}
	}
	slices.SortStableFunc(cands, c.victimOrder(rel))
	mx, _ := c.limitCap(b)
	var taken []int
	for _, vi := range cands {
		if mx >= b.min {
			break
		}
		c.release(&c.s.Running[vi], 1)
		ps.gone[vi] = true
		if n, _ := c.limitCap(b); n > mx {
			taken = append(taken, vi)
			mx = n
		} else {
			c.restore([]int{vi})
		}
	}
	if mx < b.min {
		c.restore(taken)
		return nil, mx
	}
	return taken, mx
}

// keepVictims records released victims as those of the cycle's last
// placement.
func (c *cycle) keepVictims(list []int) {
	if len(list) == 0 {
		return
	}
	p := &c.dec.Placements[len(c.dec.Placements)-1]
	for _, vi := range list {
		k := c.s.Running[vi].Job
		if !slices.Contains(p.Victims, k) {
			p.Victims = append(p.Victims, k)
			c.pre.victims = append(c.pre.victims, vi)
			c.pre.taken[vi] = true
		}
	}
}
