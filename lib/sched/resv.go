package sched

import (
	"slices"
	"time"
)

// Advance reservations (LSF's brsvadd): a reservation holds job slots on
// some hosts during time windows. Inside a window those slots are used
// only by the reservation's jobs (Job.Rsv); a job of the reservation
// runs only inside one of its windows and only on its slots.
//
// The scheduler plans around windows that have not opened yet, as LSF
// treats a reservation like a deadline: a job that does not belong to a
// reservation is not started on slots the reservation will need before
// the job's run limit ends (a job without a run limit ends never, so it
// never starts on them). Reserved slots are therefore free when a window
// opens. Jobs that run there anyway when a window opens are suspended
// when the reservation's jobs need their slots (resv_susp.go).
//
// The count is by time: on a host, at now and at every window start
// before the job would end, the slots in use then (running jobs whose
// run limit has not passed, pending jobs' slot holds) plus, for every
// reservation whose window contains that time, the part of its slots its
// own jobs do not use, must leave the job's slots free. A job of a
// reservation gets at most the reservation's slots on the host less what
// its other jobs use; its reservation's own slots do not count against
// it. For a closed reservation it ends when the window does (the
// controller kills it then), so later windows on the host do not concern
// it; an open one's job runs on and must fit around them.

// AdvRsv is an advance reservation as a cycle reads it.
type AdvRsv struct {
	ID string
	// Hosts are the slots reserved on each host.
	Hosts []RsvHost
	// Windows are the times the reservation is active, sorted and
	// disjoint: the current or next occurrence and, for a recurring
	// reservation, the occurrences after it the caller expanded (a week
	// of them is enough to plan any job whose run limit is shorter).
	Windows []Window
	// Open: its jobs keep running after a window closes (brsvadd -o).
	Open bool
	// NoSusp (brsvadd -nosusp): its jobs wait for slots other jobs hold
	// inside its window instead of suspending those jobs (resv_susp.go).
	NoSusp bool
	// Queues (brsvadd -q): these queues' jobs may start on its slots
	// before its window opens whatever their run limit; inside the window
	// they are suspended as any other job there (resv_susp.go).
	Queues []string
}

// RsvHost is a reservation's slots on one host.
type RsvHost struct {
	Host  string
	Slots int
}

// Window is one period a reservation is active: [Start, End).
type Window struct{ Start, End time.Time }

// Reasons a reservation's job pends, and host reasons, in LSF's words.
const (
	reasonRsvInactive = "Job's reservation is inactive"
	reasonRsvUnknown  = "Job's advance reservation does not exist"
)

type advWin struct{ start, end int64 }

// advRsv is a reservation's state in a cycle.
type advRsv struct {
	r     *AdvRsv
	slots map[int]int   // host index -> reserved slots
	uses  map[int][]use // host index -> its jobs' slots over time
	wins  []advWin
	set   []bool // its hosts
}

// advState is the cycle's reservations.
type advState struct {
	byID   map[string]*advRsv
	onHost map[int][]*advRsv // host index -> reservations with slots there
}

// newAdv indexes the snapshot's reservations and charges their running
// jobs to them (nil when there are none).
func (c *cycle) newAdv() *advState {
	if len(c.s.AdvRsvs) == 0 {
		return nil
	}
	a := &advState{byID: map[string]*advRsv{}, onHost: map[int][]*advRsv{}}
	for i := range c.s.AdvRsvs {
		r := &c.s.AdvRsvs[i]
		ar := &advRsv{r: r, slots: map[int]int{}, uses: map[int][]use{}, set: make([]bool, len(c.hosts))}
		for _, w := range r.Windows {
			ar.wins = append(ar.wins, advWin{w.Start.UnixNano(), w.End.UnixNano()})
		}
		for _, rh := range r.Hosts {
			h, ok := c.byName[rh.Host]
			if !ok || rh.Slots <= 0 {
				continue
			}
			if ar.slots[h] == 0 {
				a.onHost[h] = append(a.onHost[h], ar)
			}
			ar.slots[h] += rh.Slots
			ar.set[h] = true
		}
		a.byID[r.ID] = ar
	}
	for i := range c.s.Running {
		al := &c.s.Running[i]
		ar := a.byID[al.Rsv]
		if ar == nil {
			continue
		}
		end := int64(never)
		if al.RunLimit > 0 {
			end = al.Start.Add(al.RunLimit).UnixNano()
		}
		ar.add(c, al.Hosts, end)
	}
	return a
}

// add charges a job of the reservation.
func (ar *advRsv) add(c *cycle, has []HostAlloc, end int64) {
	for _, ha := range has {
		if h, ok := c.byName[ha.Host]; ok {
			ar.uses[h] = append(ar.uses[h], use{end: end, slots: ha.Slots})
		}
	}
}

// usedAt is the slots the reservation's jobs hold on host h at time t.
func (ar *advRsv) usedAt(h int, t int64) int {
	n := 0
	for _, u := range ar.uses[h] {
		if u.end > t {
			n += u.slots
		}
	}
	return n
}

// window returns the window containing t, if any.
func (ar *advRsv) window(t int64) (advWin, bool) {
	for _, w := range ar.wins {
		if w.start <= t && t < w.end {
			return w, true
		}
	}
	return advWin{}, false
}

// advBucket ties a new bucket to its job's reservation.
func (c *cycle) advBucket(b *bucket, j *Job) {
	if j.Rsv == "" {
		return
	}
	if c.adv != nil {
		b.rsv = c.adv.byID[j.Rsv]
	}
	if b.rsv == nil {
		b.bad = reasonRsvUnknown
	}
}

// advWhy is why a job of reservation ar cannot start now ("" if it may).
func (c *cycle) advWhy(ar *advRsv) string {
	if _, ok := ar.window(c.now.UnixNano()); !ok {
		return reasonRsvInactive
	}
	return ""
}

// advCap lowers free, the slots a job of bucket b can get on host h now,
// for the reservations there; ovs are the slots earlier parts of the job
// take on h.
func (c *cycle) advCap(b *bucket, h, free, ovs int) int {
	now := c.now.UnixNano()
	x := b.rsv
	end := int64(never)
	if b.dur > 0 {
		end = now + int64(b.dur)
	}
	if x != nil {
		if !x.set[h] {
			return 0
		}
		free = min(free, x.slots[h]-x.usedAt(h, now)-ovs)
		if w, ok := x.window(now); ok && !x.r.Open && w.end < end {
			end = w.end // killed when the window closes
		}
	}
	rs := c.adv.onHost[h]
	if len(rs) == 0 || free <= 0 {
		return free
	}
	hs := &c.hosts[h]
	mx := hs.h.MaxSlots
	at := func(t int64) {
		occ := 0
		if t == now {
			occ = hs.used
		} else {
			occ = c.usageAt(hs, t)
		}
		for _, r := range rs {
			if r == x {
				continue
			}
			if _, ok := r.window(t); ok {
				occ += max(0, r.slots[h]-r.usedAt(h, t))
			}
		}
		free = min(free, mx-occ-ovs)
	}
	at(now)
	for _, r := range rs {
		if r == x || slices.Contains(r.r.Queues, b.q.q.Name) {
			continue // -q: its queue's jobs are suspended when it opens
		}
		for _, w := range r.wins {
			if w.start > now && w.start < end {
				at(w.start)
			}
			if w.end > now && w.start < end && b.excl {
				return 0 // an exclusive job needs the whole host throughout
			}
		}
	}
	return free
}

// advHost reports whether host h has reservations (a host that cannot take
// a long job may still take a shorter one).
func (c *cycle) advHost(h int) bool {
	return c.adv != nil && len(c.adv.onHost[h]) > 0
}

// advCommit charges a placed job to its reservation.
func (c *cycle) advCommit(b *bucket, has []HostAlloc, end int64) {
	if b.rsv != nil {
		b.rsv.add(c, has, end)
	}
}
