package controller

import "xce/lib/api"

// An array's pending elements share one effective spec: in a cycle, no
// more of them can start than there are free slots, and those past that
// would be placed (and fail to be) one by one, at every cycle. With
// thousands of short elements pending, that was most of each cycle's
// work. The cycle hands lib/sched at most as many of one array's like
// elements as slots are free; the others keep the reason the last one
// handed over got.

// arrayCap counts, within one cycle, the elements handed to lib/sched per
// array and effective spec.
type arrayCap struct {
	free    int // job slots free on the usable hosts at the cycle's start (see newArrayCap)
	handed  map[arrayGroup]int
	last    map[arrayGroup]*rec // the last element handed over
	skipped []*rec
}

type arrayGroup struct {
	id  int64
	eff *effSpec
}

// newArrayCap starts a cycle's count (c.mu held).
func (c *Controller) newArrayCap() *arrayCap {
	conf := c.config()
	// Preemption can give a job slots that running jobs hold: then every
	// usable slot may go to the cycle's array elements.
	preempt := preemptOn(conf)
	free := 0
	for _, h := range c.hosts {
		if h.usable() {
			if preempt {
				free += h.slots
			} else {
				free += h.slots - h.used
			}
		}
	}
	// The elements no host can take now make the demand for hosts on
	// demand: as many as the templates could ever give may go through.
	for _, t := range conf.Templates {
		free += t.Max * max(t.Slots, 1)
	}
	return &arrayCap{free: max(free, 1)}
}

// full reports whether r, an array element that could be a candidate,
// is past its array's share of this cycle; if not, it is counted.
func (a *arrayCap) full(c *Controller, r *rec) bool {
	if r.job.ArrayIndex == 0 || c.staleHosts(key{r.job.JobId, r.job.ArrayIndex}) != nil {
		return false // a plain job, or one whose placement differs
	}
	g := arrayGroup{r.job.JobId, r.eff}
	if a.handed == nil {
		a.handed, a.last = map[arrayGroup]int{}, map[arrayGroup]*rec{}
	}
	if a.handed[g] >= a.free {
		a.skipped = append(a.skipped, r)
		return true
	}
	a.handed[g]++
	a.last[g] = r
	return false
}

// reasons gives the elements left out the reason the last one handed
// over got; none when it started (the cycle's reason then applies).
func (a *arrayCap) reasons(starts []*api.Job) {
	if len(a.skipped) == 0 {
		return
	}
	started := make(map[key]bool, len(starts))
	for _, j := range starts {
		started[key{j.JobId, j.ArrayIndex}] = true
	}
	for _, r := range a.skipped {
		last := a.last[arrayGroup{r.job.JobId, r.eff}]
		if last != nil && !started[key{last.job.JobId, last.job.ArrayIndex}] {
			r.why = last.why
		} else {
			r.why = ""
		}
	}
}
