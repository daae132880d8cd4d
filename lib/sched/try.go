package sched

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
	"xce/lib/resreq"
)

const (
	reasonInactive  = "The queue is inactivated by the administrator"
	reasonQueueFull = "The queue has reached its job slot limit"
	reasonQueueUser = "User has reached the per-user job slot limit of the queue"
	reasonUserLimit = "The user has reached his/her job slot limit"
	reasonSpan      = "Not enough hosts to meet the job's spanning requirement"
)

// try places one job now, or records why it pends. It reports whether the
// job was placed.
func (c *cycle) try(j *Job) bool {
	if c.s.OnlyPlacements && c.cannotFit(j) {
		return false
	}
	if why := c.jg.why(j); why != "" {
		c.pend(j.Key, []string{why})
		return false
	}
	b := c.bucket(j)
	c.noteBucket(b) // a gang's trial (gangundo.go)
	d := int64(never)
	if j.RunLimit > 0 {
		d = int64(j.RunLimit)
	}
	if b.dead && d >= b.deadFrom {
		c.pend(j.Key, b.why)
		return false
	}
	b.dur = j.RunLimit
	// fail marks the bucket dead for every job (all), or for the jobs
	// running at least as long as this one: a shorter job overlaps fewer
	// reservations and may still fit.
	fail := func(why []string, all bool) bool {
		if all || c.nres == 0 && c.adv == nil {
			d = 0
		}
		if !b.dead || d < b.deadFrom {
			b.deadFrom = d
		}
		b.dead, b.why = true, why
		c.pend(j.Key, why)
		return false
	}
	if b.q.q.Inactive {
		return fail([]string{reasonInactive}, true)
	}
	if b.bad != "" {
		return fail([]string{b.bad}, true)
	}
	if b.rsv != nil {
		if why := c.advWhy(b.rsv); why != "" {
			return fail([]string{why}, true)
		}
	}
	if len(b.variants) == 0 {
		return fail([]string{"No alternative resource requirement can be used yet"}, true)
	}
	mx, why := c.limitCap(b)
	var lv []int // victims suspended for the limits (preempt_limits.go)
	if mx < b.min {
		if lv, mx = c.limitVictims(b, j); lv == nil {
			return fail(why, true)
		}
	}
	mx = min2(mx, b.max)
	var failed *part
	var fv *variant
	for _, v := range b.variants {
		has, n, fp := c.place(b, v, mx)
		if has != nil {
			// limitCap could only count one host's share of a per-host
			// reservation; the placement's hosts give the whole charge.
			if why := c.limitOver(b, has); why != nil {
				c.restore(lv)
				return fail(why, true)
			}
			c.commit(b, j, v, has, n)
			c.keepVictims(lv)
			return true
		}
		if failed == nil {
			failed, fv = fp, v
		}
	}
	if c.preempt(b, j, mx, lv) {
		return true
	}
	c.restore(lv)
	if !c.s.NoReasons {
		why = c.explain(b, fv, failed, mx)
	}
	if b.q.q.SlotReserve && !b.reserved {
		b.reserved = true
		if r := c.reserve(b, fv, j); r != "" && !c.s.NoReasons {
			why = append(why, r)
		}
	}
	return fail(why, false)
}

// full reports, for Snapshot.OnlyPlacements, that no slot is free: no
// job of the cycle can be placed any more.
func (c *cycle) full() bool {
	return c.s.OnlyPlacements && c.free <= 0
}

// cannotFit reports that j needs more slots than are free on all hosts
// together, and that trying it would not make a reservation (which holds
// slots against later jobs of the cycle): trying it would place nothing
// and change nothing.
func (c *cycle) cannotFit(j *Job) bool {
	if j.Req != nil && len(j.Req.Compound) > 0 {
		return false // the terms' counts are its slots: let the bucket say
	}
	if max(j.MinSlots, 1) <= c.free {
		return false
	}
	qs := c.queues[j.Queue]
	if qs == nil || !qs.q.SlotReserve || c.nres >= maxReservations {
		return true
	}
	return c.bucket(j).reserved
}

// place allocates every part of variant v now. On failure it returns the
// part that did not fit.
func (c *cycle) place(b *bucket, v *variant, mx int) ([]HostAlloc, int, *part) {
	var ov overlay
	var out []HostAlloc
	dirty := 0 // what a recycled list held (recycle.go)
	total := 0
	single := len(v.parts) == 1
	c.placedIdx = c.placedIdx[:0]
	for _, p := range v.parts {
		lo, hi := b.min, mx
		if p.count > 0 {
			lo, hi = p.count, p.count
		}
		if hi = c.sharedCap(p, lo, hi); hi < lo {
			return nil, 0, p
		}
		var picks []pick
		var n int
		if p.cu != nil {
			picks, n = c.fitCU(b, p, lo, hi, ov)
		} else {
			picks, n = c.fit(b, p, lo, hi, ov, single)
		}
		if picks == nil {
			return nil, 0, p
		}
		total += n
		if out == nil {
			out, dirty = c.hostAllocs(len(picks)) // recycle.go
		}
		out = slices.Grow(out, len(picks))
		if single && c.inc && p.gpu == nil {
			// No devices (an incremental cycle has none), one part:
			// the allocations are the picks as they are (placefast.go).
			out = c.fillPlaced(out, picks, p.set)
			continue
		}
		for k, pk := range picks {
			ha := HostAlloc{Host: c.hosts[pk.h].h.Name, Slots: pk.n, Rusage: p.set, Lead: k == 0}
			var took uint64
			if hs := &c.hosts[pk.h]; p.gpu != nil && hs.gpus != nil {
				use := p.gpu.usable(hs, p.static.gpuMask[pk.h], ov.gpus(pk.h))
				pos := p.gpu.pickGPUs(hs, use, p.gpu.perHost(pk.n))
				if pos == nil {
					return nil, 0, p // capNow counted them; cannot happen
				}
				for _, i := range pos {
					took |= 1 << i
				}
				ha.GPU = &GPUAlloc{Devices: devIndices(hs, pos), Exclusive: p.gpu.Exclusive, Mem: p.gpu.Mem}
			}
			var cores []int
			if cs := c.hosts[pk.h].cpus; cs != nil {
				cores = cs.pick(cs.coresFor(pk.n, b.excl), ov.cpus(pk.h))
				if cores == nil {
					return nil, 0, p // capNow counted them; cannot happen
				}
				ha.CPUs = cs.numbers(cores)
			}
			out = append(out, ha)
			c.placedIdx = append(c.placedIdx, pk.h)
			if !single {
				if ov == nil {
					ov = overlay{}
				}
				o := ov[pk.h]
				if o == nil {
					o = &ovHost{res: make([]float64, len(c.resInfo))}
					ov[pk.h] = o
				}
				o.slots += pk.n
				o.gpus |= took
				o.cpus = append(o.cpus, cores...)
				for _, nd := range p.hneed {
					o.res[nd.idx] += amount(p.set, nd.name, 0, pk.n, k == 0, false)
				}
			}
		}
	}
	clearTail(out, dirty)
	c.notePlaced(out)
	return out, total, nil
}

// sharedCap lowers hi to what the cluster-wide resources allow.
func (c *cycle) sharedCap(p *part, lo, hi int) int {
	for _, nd := range p.sneed {
		av := c.shared[nd.name]
		if nd.amount <= 0 {
			continue
		}
		if nd.method == "task" {
			hi = min2(hi, int(math.Floor(av/nd.amount+1e-9)))
		} else if av+1e-9 < nd.amount {
			return lo - 1
		}
	}
	return hi
}

func num(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// commit records a placement and charges it.
func (c *cycle) commit(b *bucket, j *Job, v *variant, has []HostAlloc, n int) {
	end := int64(never)
	if b.dur > 0 {
		end = c.now.Add(b.dur).UnixNano()
	}
	bf := c.backfills(has) // preempt.go
	c.account(&b.vals, fairAccount(j.User, j.Account), b.lims, c.now, end, b.excl, has)
	c.hintPlaced(has, end, b.excl) // placed.go
	c.advCommit(b, has, end)
	c.free -= n
	c.dec.Placements = append(c.dec.Placements, Placement{Job: j.Key, Hosts: has, Slots: n, Alternative: v.alt, Backfill: bf})
	c.commitCU(v, has)
	c.jg.start(j)
}

// reserve computes when and where the job of bucket b can start, from the
// run limits of the jobs running, and holds those slots. Only slots are
// planned over time; the job's host rusage amounts are held as they are
// now. It returns a reason line, or "" when nothing can be planned.
func (c *cycle) reserve(b *bucket, v *variant, j *Job) string {
	if len(v.parts) != 1 {
		return "" // compound requirements are not planned ahead
	}
	p := v.parts[0]
	if len(p.all) == 0 {
		return ""
	}
	if c.nres >= maxReservations {
		return ""
	}
	// Candidate start times: now, every known end, and never.
	times := c.endTimes()
	capAt := func(t int64) func(int) int {
		return func(h int) int {
			hs := &c.hosts[h]
			u := c.usageAt(hs, t)
			for _, r := range hs.holds {
				if r.start > t {
					u = max2(u, c.usageAt(hs, r.start))
				}
			}
			if b.excl && u > 0 {
				return 0
			}
			return hs.h.MaxSlots - u
		}
	}
	try := func(t int64) []pick {
		list := p.all
		if p.cu != nil {
			return c.reserveCU(p, b.min, capAt(t)) // cu.go
		}
		if len(p.same) == 0 {
			picks, _, _ := c.allocate(p, list, capAt(t), b.min, b.min, false, false)
			return picks
		}
		for _, g := range p.static.groups { // groups of p.all
			if picks, _, _ := c.allocate(p, g, capAt(t), b.min, b.min, false, false); picks != nil {
				return picks
			}
		}
		return nil
	}
	// Capacity only grows with t, so the earliest start is found by
	// binary search.
	k := sort.Search(len(times), func(i int) bool { return try(times[i]) != nil })
	if k == len(times) || times[k] == c.now.UnixNano() {
		// Never, or the slots are there now: the job waits for something
		// else (memory, a license, a limit), which holding slots would
		// not bring sooner.
		return ""
	}
	start := times[k]
	picks := try(start)
	c.nres++
	r := Reservation{Job: j.Key}
	if start != never {
		r.Start = c.now.Add(time.Duration(start - c.now.UnixNano()))
	}
	whole := c.cuHolds(p, picks) // a cu[excl] job's units, held whole
	for i, pk := range picks {
		hs := &c.hosts[pk.h]
		hd := hold{start: start, slots: pk.n}
		if b.excl || whole[pk.h] {
			hd.slots = hs.h.MaxSlots
		}
		delete(whole, pk.h)
		if len(p.hneed) > 0 {
			hd.res = make([]float64, len(c.resInfo))
			for _, nd := range p.hneed {
				hd.res[nd.idx] += amount(p.set, nd.name, 0, pk.n, i == 0, false)
			}
		}
		hs.holds = append(hs.holds, hd)
		c.touch(pk.h)
		r.Hosts = append(r.Hosts, HostAlloc{Host: hs.h.Name, Slots: pk.n, Rusage: p.set, Lead: i == 0})
	}
	for h := range whole {
		hs := &c.hosts[h]
		hs.holds = append(hs.holds, hold{start: start, slots: hs.h.MaxSlots})
		c.touch(h) // the next incremental cycle clears the hold
	}
	c.dec.Reservations = append(c.dec.Reservations, r)
	when := "when running jobs without a run limit finish"
	if !r.Start.IsZero() {
		when = "estimated start " + r.Start.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("Slots reserved on %s; %s", plural(len(picks), "host"), when)
}

// endTimes returns now, the known ends of the jobs holding slots (after
// now, sorted, once each) and never.
func (c *cycle) endTimes() []int64 {
	if c.ends != nil {
		return c.ends
	}
	now := c.now.UnixNano()
	t := []int64{now}
	for h := range c.hosts {
		for _, u := range c.hosts[h].uses {
			if u.end != never && u.end > now {
				t = append(t, u.end)
			}
		}
	}
	slices.Sort(t)
	t = slices.Compact(t)
	c.ends = append(t, never)
	return c.ends
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// explain aggregates, over every host, why part p of the bucket's job
// could not be placed now (FitError style), in LSF's host reason wording,
// followed by the requirement terms that failed.
func (c *cycle) explain(b *bucket, v *variant, p *part, mx int) []string {
	if p == nil {
		return []string{failText[fSlots]}
	}
	lo := b.min
	if p.count > 0 {
		lo, mx = p.count, p.count
	}
	if hi := c.sharedCap(p, lo, mx); hi < lo {
		var out []string
		for _, nd := range p.sneed {
			av := c.shared[nd.name]
			if nd.method == "task" && av+1e-9 >= nd.amount*float64(lo) || nd.method != "task" && av+1e-9 >= nd.amount {
				continue
			}
			out = append(out, fmt.Sprintf("Job's requirements for reserving resource (%s) not satisfied", nd.name),
				fmt.Sprintf("rusage[%s=%s]: %s of %s available cluster-wide", nd.name, num(nd.amount), num(max(0, av)), num(c.s.Shared[nd.name])))
		}
		return out
	}
	counts := p.static.counts
	rusFail := map[int]int{}
	var gpuFail map[fail]int
	if p.gpu != nil {
		gpuFail = map[fail]int{}
		for _, f := range []fail{fNoGPU, fGPUModel, fGPUMem, fGPUCount} {
			if counts[f] > 0 {
				gpuFail[f] = counts[f]
			}
		}
	}
	phm := perHostMin(p, lo)
	freeSum, usable := 0, 0
	for _, h := range p.all {
		n, f, ri := c.capNow(b, p, h, nil)
		need := phm
		if pt := c.ptileOf(p, h); pt > 0 {
			need = min2(pt, lo)
		}
		if n < need {
			if f == okHost {
				f = fSlots
			}
			counts[okHost]--
			counts[f]++
			if f == fRusage {
				rusFail[ri]++
			}
			if f == fGPU {
				gpuFail[f]++
			}
			continue
		}
		freeSum += n
		usable++
	}
	type line struct {
		f fail
		n int
	}
	var ls []line
	for f := fail(1); f < nFail; f++ {
		if counts[f] == 0 {
			continue
		}
		// The GPU checks share the select reason's text: one line.
		dup := false
		for k := range ls {
			if failText[ls[k].f] == failText[f] {
				ls[k].n += counts[f]
				dup = true
			}
		}
		if !dup {
			ls = append(ls, line{f, counts[f]})
		}
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].n > ls[j].n })
	var out []string
	if usable > 0 && p.cu != nil {
		out = append(out, reasonSpan)
	} else if usable > 0 {
		if p.span.Hosts == 1 || p.span.Ptile > 0 || p.span.Block > 0 || len(p.same) > 0 || p.span.PtileMXJ || len(p.span.PtileBy) > 0 {
			out = append(out, reasonSpan)
		} else {
			out = append(out, fmt.Sprintf("Not enough job slot(s): %d free on %s, the job needs %d", freeSum, plural(usable, "usable host"), lo))
		}
	}
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s: %s", failText[l.f], plural(l.n, "host")))
	}
	if len(p.static.selFail) > 0 {
		if p.static.selLines == nil {
			p.static.selLines = c.selectDetail(p, p.static.selFail)
		}
		out = append(out, p.static.selLines...)
	}
	for _, nd := range p.hneed {
		if n := rusFail[nd.idx]; n > 0 {
			unit := ""
			if c.resInfo[nd.idx].units {
				unit = " MB"
			}
			verb := "have"
			if n == 1 {
				verb = "has"
			}
			what := verb + " less than " + num(nd.amount*float64(max(1, phmTask(nd, phm)))) + unit + " unreserved"
			out = append(out, fmt.Sprintf("rusage[%s=%s]: %s %s", nd.name, num(nd.amount), plural(n, "host"), what))
		}
	}
	if p.gpu != nil {
		if w := c.gpuWhy(p.gpu, gpuFail, p.gpu.perHost(phm)); w != "" {
			out = append(out, w)
		}
	}
	if p.cu != nil {
		out = append(out, c.cuWhy(b, p, lo)...)
	}
	if len(out) == 0 {
		out = append(out, "No host is available")
	}
	return out
}

func phmTask(nd need, phm int) int {
	if nd.method == "task" {
		return phm
	}
	return 1
}

// kindOf describes a resource for messages.
var kindOf = map[string]string{"mem": "memory", "swp": "swap space", "tmp": "temporary space", "ncpus": "CPUs", "ngpus": "GPUs", "ngpus_physical": "GPUs"}

func (c *cycle) describe(name string) string {
	if d, ok := kindOf[name]; ok {
		return d
	}
	return name
}

func (c *cycle) formatValue(name string, v float64) string {
	if r, _, ok := c.schema.Lookup(name); ok && r.Units {
		if v >= 1024 {
			return num(math.Round(v/1024*10)/10) + " GB"
		}
		return num(v) + " MB"
	}
	return num(v)
}

// selectDetail splits the select at its top-level && and says, for each
// term, on how many of the failing hosts it is the first one false.
func (c *cycle) selectDetail(p *part, hosts []int) []string {
	terms := splitAnd(p.expr)
	type tc struct {
		text string
		n    int
		sel  func(int) bool
		cmp  *cmpTerm
	}
	var tcs []*tc
	for _, t := range terms {
		s, err := c.schema.Compile(t, p.local)
		if err != nil {
			continue
		}
		tcs = append(tcs, &tc{text: resreq.ExprString(t), sel: func(h int) bool { return s.Match(c.valsOf(h)) }, cmp: asCmp(t)})
	}
	for _, h := range hosts {
		for _, t := range tcs {
			if !t.sel(h) {
				t.n++
				break
			}
		}
	}
	var out []string
	for _, t := range tcs {
		if t.n == 0 {
			continue
		}
		any := false
		for h := range c.hosts {
			if c.hosts[h].h.Status == HostOK && t.sel(h) {
				any = true
				break
			}
		}
		if !any && t.cmp != nil && (t.cmp.op == ">" || t.cmp.op == ">=") {
			if _, i, ok := c.schema.Lookup(t.cmp.name); ok {
				best := math.NaN()
				for h := range c.hosts {
					if c.hosts[h].h.Status != HostOK {
						continue
					}
					if v := c.valsOf(h).Num[i]; !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
						best = v
					}
				}
				largest := "no host defines " + t.cmp.name
				if !math.IsNaN(best) {
					largest = "largest: " + c.formatValue(t.cmp.name, best)
				}
				much := "enough"
				if r, _, _ := c.schema.Lookup(t.cmp.name); r.Units {
					much = "that much"
				}
				out = append(out, fmt.Sprintf("select[%s]: no host has %s %s (%s)", t.text, much, c.describe(t.cmp.name), largest))
				continue
			}
		}
		if !any {
			out = append(out, fmt.Sprintf("select[%s]: no host satisfies it", t.text))
			continue
		}
		out = append(out, fmt.Sprintf("select[%s]: not satisfied on %s", t.text, plural(t.n, "host")))
	}
	return out
}
