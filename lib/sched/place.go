package sched

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"xce/lib/resreq"
)

// bucket groups the pending jobs whose requirements are identical: same
// queue, user, project, requirement, slots, -m, -x and usable
// alternatives (the run limit matters only where slots are held for a
// reservation, see try). Hosts are filtered for a bucket once; once one of its jobs
// cannot be placed, the rest of the bucket pends with the same reasons.
type bucket struct {
	q        *qstate
	user     string
	project  string
	vals     consumers     // the jobs' user, queue, project, app, licence project
	lims     []*limitState // the limits they count against
	min, max int
	excl     bool
	dur      time.Duration // run limit of the job being tried; 0 none
	deadFrom int64         // when dead: jobs with a run limit (ns, never for none) from this one pend
	reserved bool          // a job of the bucket holds a reservation
	mset     []bool        // -m hosts; nil: any
	variants []*variant
	bad      string  // why the requirement cannot be used at all
	rsv      *advRsv // bsub -U's reservation; nil: none
	dead     bool
	why      []string
}

type variant struct {
	alt   int
	parts []*part
}

// part is a simple requirement placing some slots: the whole job, or one
// term of a compound requirement.
type part struct {
	count int // slots of a compound term; 0: the job's -n
	expr  resreq.Expr
	sel   *resreq.Selector
	set   resreq.UsageSet
	hneed []need // host resources
	sneed []need // shared resources
	span  resreq.Span
	same  []string
	all   []int // hosts passing the static checks, in order[] order
	live  []int // those that may still take a job of the bucket
	// groups are the live hosts split by their same[] values (with
	// same[] only).
	groups [][]int
	local  resreq.Local
	static *static
	gpu    *gpuNeed // nil: no GPUs
	cu     *cuNeed  // cu[] (cu.go); nil: none
}

type need struct {
	name   string
	idx    int // resource index for host resources
	amount float64
	method string
}

// fastKey identifies a job's bucket by its requirement's pointer (the
// controller shares one parsed requirement between the jobs with the same
// string), for jobs without -m: a cheaper lookup than the full key, which
// it only caches (two pointers with the same text still share a bucket).
type fastKey struct {
	queue, user, project string
	app, lic             string
	req                  *resreq.ResReq
	local                resreq.Local
	min, max             int
	excl                 bool
	alts                 int
	gpu                  *GPUReq
	rsv                  string
}

func (c *cycle) bucket(j *Job) *bucket {
	if len(j.Hosts) > 0 {
		return c.slowBucket(j)
	}
	fk := fastKey{queue: j.Queue, user: j.User, project: j.Project, app: j.App, lic: j.LicProject, req: j.Req, local: j.Local,
		min: j.MinSlots, max: j.MaxSlots, excl: j.Exclusive, alts: c.alts(j), gpu: j.GPU, rsv: j.Rsv}
	if bk, ok := c.fast[fk]; ok {
		return bk
	}
	bk := c.slowBucket(j)
	if c.fast == nil {
		c.fast = map[fastKey]*bucket{}
	}
	c.fast[fk] = bk
	return bk
}

// alts counts the alternatives of the job's requirement usable now.
func (c *cycle) alts(j *Job) int {
	alts := 0
	if j.Req != nil {
		for _, a := range j.Req.Alternatives {
			if c.now.Sub(j.Submit) >= time.Duration(a.Delay)*time.Minute {
				alts++
			}
		}
	}
	return alts
}

func (c *cycle) slowBucket(j *Job) *bucket {
	rs := ""
	if j.Req != nil {
		var ok bool
		if rs, ok = c.reqStr[j.Req]; !ok {
			rs = j.Req.String()
			c.reqStr[j.Req] = rs
		}
	}
	alts := c.alts(j)
	b := c.keyBuf[:0]
	for _, s := range []string{j.Queue, j.User, j.Project, j.App, j.LicProject, rs, j.Local.Type, j.Local.Model} {
		b = append(b, s...)
		b = append(b, 0)
	}
	for _, h := range j.Hosts {
		b = append(b, h...)
		b = append(b, 1)
	}
	// "\x00min,max,excl,alts,rsv" (strconv: fmt's Appendf was a tenth
	// of a bucket's cost).
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(j.MinSlots), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(j.MaxSlots), 10)
	b = append(b, ',')
	b = strconv.AppendBool(b, j.Exclusive)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(alts), 10)
	b = append(b, ',')
	b = append(b, j.Rsv...)
	if j.GPU != nil {
		b = append(b, "\x00gpu "...)
		b = append(b, j.GPU.String()...)
	}
	c.keyBuf = b
	if bk, ok := c.buckets[string(b)]; ok {
		return bk
	}
	bk := c.newBucket(j)
	c.buckets[string(b)] = bk
	return bk
}

func (c *cycle) newBucket(j *Job) *bucket {
	qs := c.queues[j.Queue]
	b := c.newBucketObj() // cyclemaps.go
	*b = bucket{q: qs, user: j.User, project: j.Project, vals: jobConsumers(j), excl: j.Exclusive || qs.q.Exclusive}
	b.lims = c.matching(&b.vals)
	b.min = max(j.MinSlots, 1)
	b.max = max(j.MaxSlots, b.min)
	mkey := strings.Join(j.Hosts, "\x00")
	if len(j.Hosts) > 0 {
		b.mset = c.hostSet(j.Hosts)
	}
	if c.advBucket(b, j); b.rsv != nil {
		mkey += "\x01" + j.Rsv // its hosts are the reservation's
	}
	r := j.Req
	if r == nil {
		r = &resreq.ResReq{Simple: &resreq.Simple{}}
	}
	if j.Local.Type != "" {
		r = c.defaults(j.Req, r)
	}
	add := func(alt int, req *resreq.ResReq) error {
		if req.Simple != nil {
			ors := []resreq.UsageSet{nil}
			if req.Simple.Rusage != nil && len(req.Simple.Rusage.Or) > 0 {
				ors = req.Simple.Rusage.Or
			}
			for _, set := range ors {
				p, err := c.newPart(b, j, req.Simple, set, 0, mkey)
				if err != nil {
					return err
				}
				b.variants = append(b.variants, &variant{alt: alt, parts: []*part{p}})
			}
			return nil
		}
		v := &variant{alt: alt}
		for i := range req.Compound {
			t := &req.Compound[i]
			var set resreq.UsageSet
			if t.Req.Rusage != nil && len(t.Req.Rusage.Or) > 0 {
				set = t.Req.Rusage.Or[0]
			}
			p, err := c.newPart(b, j, &t.Req, set, t.Count, mkey)
			if err != nil {
				return err
			}
			v.parts = append(v.parts, p)
		}
		b.variants = append(b.variants, v)
		return nil
	}
	if len(r.Compound) > 0 {
		n := 0
		for _, t := range r.Compound {
			n += t.Count
		}
		b.min, b.max = n, n // the terms' counts are the job's slots
	}
	var err error
	if len(r.Alternatives) > 0 {
		for i, a := range r.Alternatives {
			if c.now.Sub(j.Submit) >= time.Duration(a.Delay)*time.Minute && err == nil {
				err = add(i, a.Req)
			}
		}
	} else {
		err = add(0, r)
	}
	if err != nil {
		b.bad = "Job's resource requirements not valid on this cluster: " + err.Error()
	}
	return b
}

func (c *cycle) newPart(b *bucket, j *Job, s *resreq.Simple, set resreq.UsageSet, n int, mkey string) (*part, error) {
	local := j.Local
	p := c.newPartObj() // cyclemaps.go
	*p = part{count: n, expr: s.Select, set: set, same: s.Same, local: local}
	if s.Span != nil {
		p.span = *s.Span
	}
	for _, u := range set {
		for _, ru := range u.Resources {
			a, _ := u.AmountAt(ru.Name, 0)
			nd := need{name: ru.Name, amount: a, method: ru.Method}
			if _, ok := c.s.Shared[ru.Name]; ok {
				p.sneed = append(p.sneed, nd)
				continue
			}
			nd.idx = c.resIndex(ru.Name)
			p.hneed = append(p.hneed, nd)
		}
	}
	p.gpu = c.newGPUNeed(j, p.hneed)
	if s.CU != nil {
		var err error
		if p.cu, err = c.newCUNeed(s.CU); err != nil {
			return nil, err
		}
	}
	// What does not change in a cycle is shared by every bucket with the
	// same queue, -m list, sections and GPU need.
	key := b.q.q.Name + "\x00" + mkey + "\x00" + local.Type + "\x00" + local.Model + "\x00" + c.simpleString(s)
	if p.gpu != nil {
		key += "\x00" + p.gpu.text
	}
	st, ok := c.statics[key]
	if !ok {
		if st, ok = c.keptStatic(key, b, s, p); ok {
			c.statics[key] = st
		}
	}
	if !ok {
		st = &static{}
		var err error
		if st.sel, err = c.schema.Compile(s.Select, local); err != nil {
			return nil, err
		}
		ord := s.Order
		if ord == nil {
			ord = &resreq.DefaultOrder
		}
		sorted, err := c.sorted(ord)
		if err != nil {
			return nil, err
		}
		p.sel = st.sel
		if p.gpu != nil {
			st.gpuMask = make([]uint64, len(c.hosts))
		}
		p.static = st // staticFail records the GPU masks
		st.all = make([]int, 0, len(sorted))
		fails := c.staticFails(b, p, sorted)
		for k, h := range sorted {
			f := fails[k]
			st.counts[f]++
			switch f {
			case okHost:
				st.all = append(st.all, h)
			case fSelect:
				st.selFail = append(st.selFail, h)
			}
		}
		if len(p.same) > 0 {
			st.groups = c.groups(p, st.all)
		}
		st.asc = ascending(st.all)
		c.statics[key] = st
		c.keepStatic(key, b, s, p, st)
	}
	p.static = st
	p.sel = st.sel
	p.all = st.all
	for _, g := range st.groups {
		p.groups = append(p.groups, slices.Clone(g))
	}
	return p, nil
}

// static is what a cycle knows of a simple requirement in a queue before
// placing anything: the hosts that pass the static checks (state, queue,
// -m, select), in order[] order, and how many fail each check.
type static struct {
	sel      *resreq.Selector
	all      []int
	groups   [][]int
	counts   [nFail]int
	selFail  []int
	selLines []string // computed when first needed
	// gpuMask holds, by host, the devices that could ever serve the
	// part's GPU need (nil: no need).
	gpuMask []uint64
	asc     bool // all is in increasing host order (open.go)
}

// sorted returns the hosts in the order of an order[] section, computed
// once per cycle and order.
func (c *cycle) sorted(o *resreq.Order) ([]int, error) {
	k := orderKey(o)
	if s, ok := c.orders[k]; ok {
		return s, nil
	}
	if idx, ok := c.keptOrder(k, o); ok {
		c.orders[k] = idx
		return idx, nil
	}
	ord, err := c.schema.CompileOrder(o)
	if err != nil {
		return nil, err
	}
	keep := c.kept && c.orderKept(o)
	if keep {
		if ko, ok := c.scratch.orders[k]; ok && ko.gen == c.scratch.gen {
			c.orders[k] = ko.idx
			return ko.idx, nil
		}
	}
	idx := make([]int, len(c.hosts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return ord.Compare(c.valsOf(a), c.valsOf(b)) })
	c.orders[k] = idx
	c.keepOrder(k, o, idx)
	if keep {
		if c.scratch.orders == nil {
			c.scratch.orders = map[string]keptOrder{}
		}
		c.scratch.orders[k] = keptOrder{gen: c.scratch.gen, idx: idx}
	}
	return idx, nil
}

// orderKept reports whether the hosts' order by o can be kept from one
// cycle to the next: no key is a value the cycles write (free slots,
// resources net of reservations), so that the order changes only with
// the hosts' own values (Scratch.gen).
func (c *cycle) orderKept(o *resreq.Order) bool {
	for _, k := range o.Keys {
		_, i, ok := c.schema.Lookup(k.Name)
		if !ok || slices.Contains(c.scratch.dirty, i) {
			return false
		}
	}
	return true
}

// Why a host cannot take a job.
type fail uint8

const (
	okHost fail = iota
	fClosed
	fLocked
	fUnavail
	fQueue
	fSpecified
	fSelect
	fExclRun
	fExclNeeded
	fHostLimit
	fLimit     // a legacy per-host slot limit
	fLimitSlot // lsb.resources limits on hosts
	fLimitJobs
	fLimitMem
	fLimitSwp
	fLimitTmp
	fLimitRes
	fReserved
	fSlots
	fRusage
	fNoGPU    // no GPU devices
	fGPUModel // no device of the model
	fGPUMem   // no device of the model with that much memory
	fGPUCount // fewer matching devices than the job takes on a host
	fGPU      // fewer free matching devices now
	fCores    // fewer free cores than slots (Host.CPUs)
	fCUExcl   // in a compute unit a cu[excl] job uses
	fNotRsv   // not a host of the job's advance reservation
	fAdvRsv   // slots an advance reservation holds (resv.go)
	nFail
)

var failText = [nFail]string{
	fClosed:     "Closed by LSF administrator",
	fLocked:     "Host is locked by LSF administrator",
	fUnavail:    "Unable to reach slave batch server",
	fQueue:      "Not usable to the queue",
	fSpecified:  "Not specified in job submission",
	fSelect:     "Job's resource requirements not satisfied",
	fExclRun:    "Running an exclusive job",
	fExclNeeded: "Job's requirement for exclusive execution not satisfied",
	fHostLimit:  "Queue's per-host job slot limit reached",
	fLimit:      "Job slot limit reached",
	fLimitSlot:  "Resource (slot) limit defined on host and/or host group has been reached",
	fLimitJobs:  "JOBS limit defined on host or host group has been reached",
	fLimitMem:   "Resource (mem) limit defined on host and/or host group has been reached",
	fLimitSwp:   "Resource (swp) limit defined on host and/or host group has been reached",
	fLimitTmp:   "Resource (tmp) limit defined on host and/or host group has been reached",
	fLimitRes:   "Resource limit defined on host and/or host group has been reached",
	fReserved:   "Job slots reserved for a higher-priority pending job",
	fSlots:      "Not enough job slot(s)",
	fRusage:     "Job's requirements for resource reservation not satisfied",
	// gpu.md §6: a host without the GPUs falls under the resource
	// requirement reason, one without enough free under the rusage
	// pattern with LSF's resource name.
	fNoGPU:    "Job's resource requirements not satisfied",
	fGPUModel: "Job's resource requirements not satisfied",
	fGPUMem:   "Job's resource requirements not satisfied",
	fGPUCount: "Job's resource requirements not satisfied",
	fGPU:      "Job requirements for reserving resource (ngpus_physical) not satisfied",
	// LSF's pattern for a resource taken now, as for GPUs.
	fCores:  "Job requirements for reserving resource (cores) not satisfied",
	fCUExcl: reasonCUExcl,
	fNotRsv: "Host does not belong to the specified advance reservation",
	fAdvRsv: "Not enough job slot(s) while advance reservation is active",
}

// staticFails runs staticFail over hosts, on two goroutines when there
// are many (the select of every distinct requirement runs once per host:
// the largest fixed cost of a cycle). Each goroutine writes its own part
// of the result, so the outcome does not depend on the scheduling.
func (c *cycle) staticFails(b *bucket, p *part, hosts []int) []fail {
	out := c.failBuf[:0]
	out = slices.Grow(out, len(hosts))[:len(hosts)]
	c.failBuf = out
	c.freshenAll(hosts) // restorelite.go: the goroutines below only read the values
	run := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			out[k] = c.staticFail(b, p, hosts[k])
		}
	}
	if len(hosts) < 1000 || runtime.GOMAXPROCS(0) < 2 {
		run(0, len(hosts))
		return out
	}
	half := len(hosts) / 2
	var wg sync.WaitGroup
	wg.Go(func() { run(half, len(hosts)) })
	run(0, half)
	wg.Wait()
	return out
}

// staticFail checks what does not change during a cycle.
func (c *cycle) staticFail(b *bucket, p *part, h int) fail {
	hs := &c.hosts[h]
	switch hs.h.Status {
	case HostClosed:
		return fClosed
	case HostLocked:
		return fLocked
	case HostUnavail:
		return fUnavail
	}
	if b.q.hosts != nil && !b.q.hosts[h] {
		return fQueue
	}
	if b.mset != nil && !b.mset[h] {
		return fSpecified
	}
	if b.rsv != nil && !b.rsv.set[h] {
		return fNotRsv
	}
	if !p.sel.Match(c.valsOf(h)) {
		return fSelect
	}
	if p.gpu != nil {
		f, mask := c.gpuStatic(p.gpu, hs)
		p.static.gpuMask[h] = mask // each goroutine writes its own hosts
		return f
	}
	return okHost
}

// overlay is what earlier parts of the same job take on hosts.
type overlay map[int]*ovHost

type ovHost struct {
	slots int
	res   []float64
	gpus  uint64 // devices taken (by position)
	cpus  []int  // cores taken (by position)
}

func (o overlay) slots(h int) int {
	if x := o[h]; x != nil {
		return x.slots
	}
	return 0
}

func (o overlay) gpus(h int) uint64 {
	if x := o[h]; x != nil {
		return x.gpus
	}
	return 0
}

func (o overlay) cpus(h int) []int {
	if x := o[h]; x != nil {
		return x.cpus
	}
	return nil
}

func (o overlay) res(h, i int) float64 {
	if x := o[h]; x != nil && i < len(x.res) {
		return x.res[i]
	}
	return 0
}

// usageAt returns the slots in use on a host at time t: jobs that have
// not ended by then, and reservations started by then.
func (c *cycle) usageAt(hs *hostState, t int64) int {
	n := 0
	for _, u := range hs.uses {
		if u.end > t {
			n += u.slots
		}
	}
	for _, r := range hs.holds {
		if r.start <= t {
			n += r.slots
		}
	}
	return n
}

// capNow returns how many slots of part p a job of bucket b can get on
// host h now, and why not more when it is below the part's per-host
// minimum. ri is the resource that failed for fRusage.
func (c *cycle) capNow(b *bucket, p *part, h int, ov overlay) (n int, why fail, ri int) {
	hs := &c.hosts[h]
	if hs.excl {
		return 0, fExclRun, 0
	}
	if c.cu != nil && c.cu.locked[h] {
		return 0, fCUExcl, 0
	}
	ovs := ov.slots(h)
	mx := hs.h.MaxSlots
	free := mx - hs.used - ovs
	if b.excl && (hs.used > 0 || ovs > 0) {
		return 0, fExclNeeded, 0
	}
	if free <= 0 {
		return 0, fSlots, 0
	}
	if c.adv != nil {
		if free = c.advCap(b, h, free, ovs); free <= 0 {
			return 0, fAdvRsv, 0
		}
	}
	overlaps := false
	if len(hs.holds) > 0 {
		end := int64(never)
		if b.dur > 0 {
			end = c.now.Add(b.dur).UnixNano()
		}
		for _, r := range hs.holds {
			// A job with no known end overlaps every hold, even one
			// planned for when such jobs end.
			if r.start < end || end == never {
				overlaps = true
				if f := mx - c.usageAt(hs, r.start) - ovs; f < free {
					free = f
				}
			}
		}
		if free <= 0 {
			return 0, fReserved, 0
		}
		if b.excl && overlaps {
			return 0, fReserved, 0
		}
	}
	if lim := b.q.q.HostSlotLimit; lim > 0 {
		if f := lim - hs.qused[b.q.q.Name] - ovs; f < free {
			free = f
			if free <= 0 {
				return 0, fHostLimit, 0
			}
		}
	}
	if len(b.lims) > 0 {
		var why fail
		if free, why = c.hostLimitCap(b, p, h, free, ovs); free <= 0 {
			return 0, why, 0
		}
	}
	for _, nd := range p.hneed {
		if hs.gpus != nil && nd.name == ngpusPhysical && p.gpu != nil {
			continue // the devices decide, below
		}
		av := hs.avail[nd.idx] - ov.res(h, nd.idx)
		if overlaps {
			for _, r := range hs.holds {
				if r.res != nil && nd.idx < len(r.res) {
					av -= r.res[nd.idx]
				}
			}
		}
		if math.IsNaN(av) || nd.amount <= 0 {
			if nd.amount > 0 {
				return 0, fRusage, nd.idx
			}
			continue
		}
		if nd.method == "task" {
			if k := int(math.Floor(av/nd.amount + 1e-9)); k < free {
				free = k
			}
		} else if av+1e-9 < nd.amount {
			free = 0
		}
		if free <= 0 {
			return 0, fRusage, nd.idx
		}
	}
	if p.gpu != nil && hs.gpus != nil {
		n := bits.OnesCount64(p.gpu.usable(hs, p.static.gpuMask[h], ov.gpus(h)))
		if !p.gpu.PerTask {
			if n < p.gpu.perHost(1) {
				return 0, fGPU, 0
			}
		} else if k := n / max(1, p.gpu.Num); k < free {
			free = k
			if free <= 0 {
				return 0, fGPU, 0
			}
		}
	}
	if cs := hs.cpus; cs != nil {
		// One core per slot; an exclusive job takes every core, which
		// its hosts' being empty already leaves free.
		n := cs.free(ov.cpus(h))
		if b.excl {
			if n < cs.coresFor(0, true) {
				return 0, fCores, 0
			}
		} else if n < free {
			if n <= 0 {
				return 0, fCores, 0
			}
			return n, fCores, 0
		}
	}
	return free, okHost, 0
}

// perHostMin is the fewest slots a host must offer to be of use.
func perHostMin(p *part, min int) int {
	switch {
	case p.span.Hosts == 1:
		return min
	case p.span.Block > 0:
		return p.span.Block
	}
	return 1
}

type pick struct{ h, n int }

// ptileOf returns the slots per host of a ptile span on host h (0: none).
func (c *cycle) ptileOf(p *part, h int) int {
	sp := &p.span
	if sp.Ptile > 0 {
		return sp.Ptile
	}
	if !sp.PtileMXJ && len(sp.PtileBy) == 0 {
		return 0
	}
	for _, ts := range sp.PtileBy {
		for _, name := range []string{"type", "model"} {
			if r, i, ok := c.schema.Lookup(name); ok && r.Kind == resreq.String && c.valsOf(h).Str[i] == ts.Type {
				return ts.Slots
			}
		}
	}
	return c.hosts[h].h.MaxSlots
}

// allocate picks hosts from list (in order) for between min and max slots
// under the part's span. capf gives a host's capacity. With prune, hosts
// that can no longer serve the part are dropped from the list, which is
// returned.
func (c *cycle) allocate(p *part, list []int, capf func(int) int, min, max int, prune, own bool) ([]pick, []int, int) {
	return c.allocateInto(nil, p, list, capf, min, max, prune, own, nil, plainCap{})
}

// allocateInto is allocate appending the picks to buf[:0]: fit passes
// the cycle's buffer, as place reads its picks before it fits again.
// With open (an ascending list, capf the capacity with nothing of the
// job taken yet) it skips the hosts that set says are full (open.go);
// a walk of the shared list that drops none of the hosts it asks then
// returns a nil list: not pruned, the full hosts skipped again next
// time for less than copying the list.
//
// With plain.on, a host without holds or cores gets its capacity from
// its free slots here instead of from capf (plainCap).
func (c *cycle) allocateInto(buf []pick, p *part, list []int, capf func(int) int, min, max int, prune, own bool, open openBits, plain plainCap) ([]pick, []int, int) {
	phm := perHostMin(p, min)
	picks := buf[:0]
	total := 0
	var kept []int
	lazy := prune && !own && open != nil // kept in c.keptBuf until a host is dropped
	if prune {
		switch {
		case own:
			kept = list[:0] // in place: kept never passes the host read
		case lazy:
			kept = c.keptBuf[:0]
		default:
			kept = c.ints(len(list))
		}
	}
	dropped := false
	stripe := p.span.Stripe
	ptiled := p.span.Ptile > 0 || p.span.PtileMXJ || len(p.span.PtileBy) > 0
	var sc []pick // stripe capacities
	i := 0
	for ; i < len(list) && (total < max || stripe); i++ {
		h := list[i]
		if open != nil {
			if !open.has(h) {
				// To the first host at or after the next open one (the
				// loop's i++ steps onto it).
				i = seekAsc(list, i+1, open.next(h+1, len(c.hosts))) - 1
				continue
			}
			if hostFull(&c.hosts[h]) {
				// capf would say 0, and keep drop it (its holds matter
				// only while it has a free slot).
				open.clear(h)
				continue
			}
		}
		hs := &c.hosts[h]
		var cp int
		if plain.on && len(hs.holds) == 0 && hs.cpus == nil {
			cp = plain.capOf(hs)
		} else {
			cp = capf(h)
		}
		if prune {
			// A host with holds may still take a shorter job of the bucket.
			if cp < phm && len(hs.holds) == 0 && !c.advHost(h) {
				dropped = true
			} else {
				kept = append(kept, h)
			}
		}
		if cp <= 0 {
			continue
		}
		switch {
		case p.span.Hosts == 1:
			if cp >= min {
				n := min2(cp, max)
				picks, total = append(picks, pick{h, n}), n
				i++
				goto done
			}
		case p.span.Block > 0:
			bl := p.span.Block
			n := min2(cp/bl*bl, (max-total)/bl*bl)
			if n > 0 {
				picks, total = append(picks, pick{h, n}), total+n
			}
		case stripe:
			lim := cp
			if p.span.StripeMax > 0 {
				lim = min2(lim, p.span.StripeMax)
			}
			sc = append(sc, pick{h, lim})
			total += lim
		default:
			if ptiled { // else ptileOf says 0
				if pt := c.ptileOf(p, h); pt > 0 {
					n := min2(pt, max-total)
					if cp >= n {
						picks, total = append(picks, pick{h, n}), total+n
					}
					continue
				}
			}
			n := min2(cp, max-total)
			picks, total = append(picks, pick{h, n}), total+n
		}
	}
done:
	if lazy {
		c.keptBuf = kept[:0]
		if !dropped {
			list = nil // not pruned (see above)
		} else {
			l := append(c.ints(len(kept)+len(list)-i), kept...)
			list = append(l, list[i:]...)
		}
	} else if prune {
		if own {
			// The kept hosts are list[:len(kept)]: move them up against
			// list[i:] (only they move, not the rest of the list, which
			// would cost a copy of the whole list per job).
			if k := len(kept); k < i {
				copy(list[i-k:i], kept)
				list = list[i-k:]
			}
		} else {
			list = append(kept, list[i:]...)
		}
		if list == nil {
			list = []int{} // pruned empty, not "not pruned yet"
		}
	}
	if stripe {
		// Deal the slots out one by one over the hosts found.
		want := min2(total, max)
		got := make([]int, len(sc))
		total = 0
		for total < want {
			for k := range sc {
				if got[k] < sc[k].n && total < want {
					got[k]++
					total++
				}
			}
		}
		for k := range sc {
			if got[k] > 0 {
				picks = append(picks, pick{sc[k].h, got[k]})
			}
		}
	}
	if p.span.Hosts == 1 && len(picks) == 0 {
		total = 0
	}
	if total < min || len(picks) == 0 {
		return nil, list, total // none picked is nil, a buffer or not
	}
	return picks, list, total
}

// plainCap is capNow for a part that needs nothing of a host but its
// slots, where nothing else bounds them (no compute units, advance
// reservations, host slot limit, limits by host, host resources or
// devices, nothing of the job taken yet): on a host without holds or
// cores its capacity is its free slots, none where an exclusive job
// runs or where the bucket's exclusive job finds a slot used. Most
// hosts a large placement walks are such, and capNow's checks and
// call cost more than the walk. TestPlainCapSameAsCapNow compares it.
type plainCap struct {
	on, excl bool
}

// noPlainCap makes every placement ask capNow; plainUsed counts the
// walks that did not (tests).
var (
	noPlainCap bool
	plainUsed  atomic.Int64
)

// plainCap returns the plain capacity for part p of bucket b (off
// where capNow checks more than the slots).
func (c *cycle) plainCap(b *bucket, p *part, ov overlay) plainCap {
	if noPlainCap || len(ov) > 0 || c.cu != nil || c.adv != nil || b.q.q.HostSlotLimit > 0 ||
		len(b.lims) > 0 || len(p.hneed) > 0 || p.gpu != nil {
		return plainCap{}
	}
	plainUsed.Add(1)
	return plainCap{on: true, excl: b.excl}
}

// capOf is capNow's figure for a host without holds or cores.
func (pc plainCap) capOf(hs *hostState) int {
	if hs.excl {
		return 0
	}
	if pc.excl && hs.used > 0 {
		return 0
	}
	return max(0, hs.h.MaxSlots-hs.used)
}

func min2(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// fit allocates part p now, honouring same[]: hosts are grouped by the
// values of the same[] resources and the first group (in host order) that
// fits is used.
func (c *cycle) fit(b *bucket, p *part, min, max int, ov overlay, prune bool) ([]pick, int) {
	capf := func(h int) int {
		n, _, _ := c.capNow(b, p, h, ov)
		return n
	}
	if len(p.same) == 0 {
		list, own := p.live, true
		if list == nil {
			list, own = p.all, false // shared until first pruned
		}
		var open openBits
		if len(ov) == 0 && p.static != nil && p.static.asc {
			open = c.openSet()
		}
		picks, list, total := c.allocateInto(c.pickBuf, p, list, capf, min, max, prune, own, open, c.plainCap(b, p, ov))
		if prune {
			p.live = list
		}
		if cap(picks) > cap(c.pickBuf) {
			c.pickBuf = picks[:0]
		}
		return picks, total
	}
	best := 0
	for gi, g := range p.groups {
		picks, list, total := c.allocate(p, g, capf, min, max, prune, true)
		if prune {
			p.groups[gi] = list
		}
		if picks != nil {
			return picks, total
		}
		best = max2(best, total)
	}
	if prune {
		p.groups = slices.DeleteFunc(p.groups, func(g []int) bool { return len(g) == 0 })
	}
	return nil, best
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// groups splits hosts by their values of the part's same[] resources,
// keeping host order within and between groups.
func (c *cycle) groups(p *part, list []int) [][]int {
	idx := map[string]int{}
	var out [][]int
	var key []byte
	type res struct {
		r resreq.Resource
		i int
	}
	var rs []res
	for _, name := range p.same {
		if r, i, ok := c.schema.Lookup(name); ok {
			rs = append(rs, res{r, i})
		}
	}
	for _, h := range list {
		key = key[:0]
		for _, x := range rs {
			r, i := x.r, x.i
			v := c.valsOf(h)
			switch r.Kind {
			case resreq.Numeric:
				key = strconv.AppendFloat(key, v.Num[i], 'g', -1, 64)
			case resreq.String:
				key = append(key, v.Str[i]...)
			case resreq.Boolean:
				key = strconv.AppendBool(key, v.Bool[i])
			}
			key = append(key, 0)
		}
		g, ok := idx[string(key)]
		if !ok {
			g = len(out)
			idx[string(key)] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], h)
	}
	return out
}

func orderKey(o *resreq.Order) string {
	var sb strings.Builder
	if o.Resort {
		sb.WriteByte('!')
	}
	for _, k := range o.Keys {
		if k.Reverse {
			sb.WriteByte('-')
		}
		sb.WriteString(k.Name)
		sb.WriteByte(':')
	}
	return sb.String()
}
