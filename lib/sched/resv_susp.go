package sched

import "slices"

// Jobs running on a reservation's slots when its window opens (LSF's
// advance reservation rule): they keep running until a job of the
// reservation needs the slots; then, as LSF does, the jobs that do not
// belong to the reservation and run on the hosts it needs are suspended
// (SSUSP), as many as the reservation's job needs and no more, in the
// order preemption takes victims (the lowest queue priority, then the most
// recently started). It is the preemption decision of the cycle
// (preempt.go) with other victims: any job on the reservation's hosts
// that is not one of its own nor of another reservation whose window is
// open, whatever the queues' preemption settings. A suspended job resumes
// when its slots are free again and no open window holds them for its
// reservation: in practice when the window closes (a closed reservation's
// jobs are killed then) or when an open reservation's jobs end after it.
//
// With -nosusp (AdvRsv.NoSusp) nothing is suspended: the reservation's
// jobs wait until the slots are free. Such jobs exist because a
// reservation was made or moved over running jobs (brsvadd over busy
// hosts, brsvmod -b or addhost), because a job of a queue the reservation
// names (-q, AdvRsv.Queues) may start on its slots before the window
// whatever its run limit, or because a running job's run limit was raised
// (bmod -W) past the window's start.

// advMaySuspend reports whether some reservation's window is open now and
// may suspend jobs for its own: then the slots running jobs hold bound
// nothing (Snapshot.OnlyPlacements' shortcuts).
func advMaySuspend(s *Snapshot) bool {
	for i := range s.AdvRsvs {
		r := &s.AdvRsvs[i]
		if r.NoSusp {
			continue
		}
		for _, w := range r.Windows {
			if !s.Now.Before(w.Start) && s.Now.Before(w.End) {
				return true
			}
		}
	}
	return false
}

// advSuspender is the reservation a job of bucket b may suspend other
// jobs for now (nil: none).
func (c *cycle) advSuspender(b *bucket) *advRsv {
	x := b.rsv
	if x == nil || x.r.NoSusp {
		return nil
	}
	if _, ok := x.window(c.now.UnixNano()); !ok {
		return nil
	}
	return x
}

// buildRsvVictims indexes, per host, the running jobs that are not
// suspended: the candidates for every reservation.
func (c *cycle) buildRsvVictims() {
	ps := c.pre
	ps.rsvByHost = make([][]int, len(c.hosts))
	for i := range c.s.Running {
		a := &c.s.Running[i]
		if a.Preempt.Suspended {
			continue
		}
		for _, ha := range a.Hosts {
			if h, ok := c.byName[ha.Host]; ok {
				ps.rsvByHost[h] = append(ps.rsvByHost[h], i)
			}
		}
	}
}

// rsvVictimsOn returns the jobs on host h that a job of reservation x may
// suspend now, in the order they are taken: only as many as hold the
// slots of x that are not free now (none where x's unused slots are
// free: a job is never suspended to make room beyond the reservation's
// slots, nor for a later window).
func (c *cycle) rsvVictimsOn(h int, x *advRsv) []int {
	ps := c.pre
	now := c.now.UnixNano()
	hs := &c.hosts[h]
	free := hs.h.MaxSlots - hs.used - c.advHeldFor(h, &Alloc{Rsv: x.r.ID})
	if hs.excl {
		free = 0
	}
	short := x.slots[h] - x.usedAt(h, now) - max(0, free)
	if short <= 0 {
		return nil
	}
	var out []int
	for _, i := range ps.rsvByHost[h] {
		a := &c.s.Running[i]
		if ps.gone[i] || a.Rsv == x.r.ID {
			continue
		}
		if o := c.adv.byID[a.Rsv]; o != nil {
			if _, ok := o.window(now); ok {
				continue // it runs in its own reservation's slots
			}
		}
		out = append(out, i)
	}
	slices.SortStableFunc(out, c.victimOrder(nil))
	name := hs.h.Name
	for k, i := range out {
		for _, ha := range c.s.Running[i].Hosts {
			if ha.Host == name {
				short -= ha.Slots
			}
		}
		if short <= 0 {
			return out[:k+1]
		}
	}
	return out
}

// advHeldFor is the slots on host h that reservations with an open window
// hold now for their jobs and that running job a may not use: what they
// reserve there less what their jobs use, for every reservation but a's
// own. A job suspended for a reservation does not resume into them.
func (c *cycle) advHeldFor(h int, a *Alloc) int {
	if c.adv == nil {
		return 0
	}
	now := c.now.UnixNano()
	n := 0
	for _, r := range c.adv.onHost[h] {
		if r.r.ID == a.Rsv {
			continue
		}
		if _, ok := r.window(now); ok {
			n += max(0, r.slots[h]-r.usedAt(h, now))
		}
	}
	return n
}
