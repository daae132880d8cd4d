package sched

import (
	"maps"
	"math"
	"slices"
	"time"
)

// Taking back a gang placed in part, within the run (gang.go). While a
// gang's members are tried, the cycle notes the state each of their
// placements changes (the hosts it charges, the queue's counts, the free
// slots, the shared resources, the known ends, the buckets' verdicts):
// when some but not all of them fit, that state is put back as it was
// before the gang's turn, and the run goes on as a run without the gang
// would from there, instead of the whole cycle running again without it.
// What the notes do not cover (limits, job group limits, preemption,
// advance reservations, compute units, devices and cores, slot
// reservations made by a member) makes the trial unclean: the gang stays
// placed in part and the cycle runs again without it, as before.

// gangTrial is the state one gang's trial changed, as it was before.
type gangTrial struct {
	clean    bool
	queue    string
	free     int
	nplace   int
	nres     int
	nrsv     int
	ends     []int64
	shared   map[string]float64
	hosts    map[int]*savedHost
	qused    int
	uused    map[string]savedInt
	slots    map[string]savedInt
	run      map[string]savedFloat
	buckets  []savedBucket
	resInfos int
}

type savedHost struct {
	used    int
	excl    bool
	nuses   int
	nholds  int
	avail   []float64
	qused   int
	hasQ    bool
	qusedOK bool // the host had a qused map
}

type savedInt struct {
	v  int
	ok bool
}

type savedFloat struct {
	v  float64
	ok bool
}

type savedBucket struct {
	b        *bucket
	dead     bool
	deadFrom int64
	why      []string
	reserved bool
	dur      time.Duration
	parts    []savedPart // by variant, then part
}

// savedPart is a part's host lists before the trial (copies: placing
// prunes them in place).
type savedPart struct {
	live   []int
	groups [][]int
}

// beginGang starts noting what gang members' tries change; nil when
// the cycle has state the notes do not cover.
func (c *cycle) beginGang(queue string) *gangTrial {
	if len(c.limits) > 0 || c.jg != nil || len(c.pre.rel) > 0 || c.adv != nil || c.cu != nil || c.anyGPU || c.free >= math.MaxInt/4 {
		return nil
	}
	t := &gangTrial{clean: true, queue: queue, free: c.free, nplace: len(c.dec.Placements), nres: c.nres, nrsv: len(c.dec.Reservations),
		ends: slices.Clone(c.ends), hosts: map[int]*savedHost{}, resInfos: len(c.resInfo)}
	if len(c.shared) > 0 {
		t.shared = maps.Clone(c.shared)
	}
	if qs := c.queues[queue]; qs != nil {
		t.qused = qs.used
		t.uused, t.slots, t.run = map[string]savedInt{}, map[string]savedInt{}, map[string]savedFloat{}
	}
	return t
}

// noteJob notes a member's queue counts before its try.
func (c *cycle) noteJob(j *Job) {
	t := c.trial
	if t == nil || t.uused == nil {
		return
	}
	qs := c.queues[t.queue]
	if _, ok := t.uused[j.User]; !ok {
		v, ok := qs.uused[j.User]
		t.uused[j.User] = savedInt{v, ok}
	}
	acct := fairAccount(j.User, j.Account)
	if _, ok := t.slots[acct]; !ok {
		v, ok := qs.slots[acct]
		t.slots[acct] = savedInt{v, ok}
		f, fok := qs.run[acct]
		t.run[acct] = savedFloat{f, fok}
	}
}

// noteBucket notes a bucket's verdict before a member's try in it.
func (c *cycle) noteBucket(b *bucket) {
	t := c.trial
	if t == nil {
		return
	}
	for i := range t.buckets {
		if t.buckets[i].b == b {
			return
		}
	}
	sb := savedBucket{b: b, dead: b.dead, deadFrom: b.deadFrom, why: b.why, reserved: b.reserved, dur: b.dur}
	for _, v := range b.variants {
		for _, p := range v.parts {
			sp := savedPart{live: slices.Clone(p.live)}
			if p.groups != nil {
				sp.groups = make([][]int, len(p.groups))
				for i, g := range p.groups {
					sp.groups[i] = slices.Clone(g)
				}
			}
			sb.parts = append(sb.parts, sp)
		}
	}
	t.buckets = append(t.buckets, sb)
}

// noteHost notes host h's state before a member's placement charges it.
func (c *cycle) noteHost(h int) {
	t := c.trial
	if t == nil || t.hosts[h] != nil {
		return
	}
	hs := &c.hosts[h]
	if hs.cpus != nil || hs.gpus != nil {
		t.clean = false
	}
	sh := &savedHost{used: hs.used, excl: hs.excl, nuses: len(hs.uses), nholds: len(hs.holds), avail: slices.Clone(hs.avail), qusedOK: hs.qused != nil}
	sh.qused, sh.hasQ = hs.qused[t.queue]
	t.hosts[h] = sh
}

// undoGang puts back what the trial noted, reporting whether it could
// (a clean trial).
func (c *cycle) undoGang(t *gangTrial) bool {
	if !t.clean || c.nres != t.nres || len(c.dec.Reservations) != t.nrsv || len(c.dec.Placements) < t.nplace {
		return false
	}
	for h, sh := range t.hosts {
		hs := &c.hosts[h]
		hs.used, hs.excl = sh.used, sh.excl
		hs.uses = hs.uses[:sh.nuses]
		hs.holds = hs.holds[:sh.nholds]
		copy(hs.avail, sh.avail)
		for ri := len(sh.avail); ri < len(hs.avail); ri++ {
			// A resource first indexed during the trial.
			hs.avail[ri] = c.resBase(h, ri)
		}
		switch {
		case sh.hasQ:
			hs.qused[t.queue] = sh.qused
		case sh.qusedOK:
			delete(hs.qused, t.queue)
		default:
			hs.qused = nil
		}
	}
	c.free = t.free
	clear(c.dec.Placements[t.nplace:])
	if c.dec.Placements = c.dec.Placements[:t.nplace]; t.nplace == 0 {
		c.dec.Placements = nil // as a run that placed nothing leaves it
	}
	c.ends = t.ends
	if t.shared != nil {
		c.shared = t.shared
	}
	if qs := c.queues[t.queue]; qs != nil && t.uused != nil {
		qs.used = t.qused
		putInt(qs.uused, t.uused)
		putInt(qs.slots, t.slots)
		for k, s := range t.run {
			if s.ok {
				qs.run[k] = s.v
			} else {
				delete(qs.run, k)
			}
		}
	}
	for i := len(t.buckets) - 1; i >= 0; i-- {
		sb := &t.buckets[i]
		b := sb.b
		b.dead, b.deadFrom, b.why, b.reserved = sb.dead, sb.deadFrom, sb.why, sb.reserved
		b.dur = sb.dur
		// The members' placements pruned hosts they filled from the
		// bucket's lists; those may take its jobs again.
		k := 0
		for _, v := range b.variants {
			for _, p := range v.parts {
				p.live, p.groups = sb.parts[k].live, sb.parts[k].groups
				k++
			}
		}
	}
	return true
}

func putInt(m map[string]int, saved map[string]savedInt) {
	for k, s := range saved {
		if s.ok {
			m[k] = s.v
		} else {
			delete(m, k)
		}
	}
}

// resBase is what a resource index first added holds for host h, as
// resIndex (or incResIndex) sets it.
func (c *cycle) resBase(h, ri int) float64 {
	if c.inc {
		return c.ledger.base[h][ri]
	}
	if info := c.resInfo[ri]; info.num >= 0 {
		return c.hosts[h].vals.Num[info.num]
	}
	return math.NaN()
}
