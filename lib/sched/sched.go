package sched

import (
	"container/heap"
	"math"
	"slices"
	"strings"
	"time"

	"xce/lib/resreq"
)

// gauges are the resources a host reports as currently available (load
// indices): a job's reservation of one is charged only for the part it
// does not use yet. Every other host resource is a counter: the host's
// value is its total and reservations are subtracted whole.
var gauges = map[string]bool{
	"r15s": true, "r1m": true, "r15m": true, "ut": true, "pg": true, "io": true,
	"ls": true, "it": true, "tmp": true, "swp": true, "mem": true,
}

// Times on a host's time axis are Unix nanoseconds; never is "no known
// end".
const never = math.MaxInt64

// maxReservations bounds the reservations one cycle makes (each costs a
// search over the hosts); jobs after that pend without holding slots.
const maxReservations = 256

// use is one job's slots on a host over time.
type use struct {
	end   int64 // never: no known end
	slots int
}

// hold is a reservation for a pending job on one host.
type hold struct {
	start int64
	slots int
	res   []float64 // amounts held, by resource index (nil: none)
}

type hostState struct {
	h    *Host
	vals *resreq.Host // what select and order read
	used int
	excl bool
	// pre: the host's values are those of used and excl as they were
	// before the cycle's first change of it (preUsed, preExcl), not of
	// its state now (restorelite.go's valsBefore).
	pre, preExcl bool
	preUsed      int
	uses         []use
	room         [slabUses]use // uses' first room, in a kept host (restorelite.go)
	holds        []hold
	avail        []float64 // by resource index: reservable now
	qused        map[string]int
	gpus         *gpuPool  // the host's devices (Host.GPUs); nil: none listed
	cpus         *cpuState // the host's cores (Host.CPUs); nil: none listed
}

type qstate struct {
	q     *Queue
	used  int
	uused map[string]int
	hosts []bool             // nil: all
	run   map[string]float64 // fairshare: slot-hours of running jobs per account
	slots map[string]int     // fairshare: slots held per account
}

// fairAccount is the fairshare account a job or allocation is charged to.
func fairAccount(user, account string) string {
	if account != "" {
		return account
	}
	return user
}

type cycle struct {
	s       *Snapshot
	schema  *resreq.Schema
	now     time.Time
	hosts   []hostState
	byName  map[string]int
	resIdx  map[string]int
	resInfo []resInfo
	shared  map[string]float64 // available now
	queues  map[string]*qstate
	limits  []*limitState
	buckets map[string]*bucket
	fast    map[fastKey]*bucket
	failBuf []fail
	orders  map[string][]int
	sets    map[string][]bool
	reqStr  map[*resreq.ResReq]string
	ends    []int64 // sorted distinct known ends after now; nil: to compute
	nres    int     // reservations made
	statics map[string]*static
	jobsOf  map[string][]int // pending jobs (indices in Snapshot.Jobs) by queue
	orphans []int            // jobs of queues that do not exist
	dec     *Decision
	keyBuf  []byte
	anyGPU  bool // some host lists GPU devices
	// free is at least the slots still free on all hosts together
	// (Snapshot.OnlyPlacements: a job needing more is not tried).
	free    int
	hostQ   bool // some queue has a per-host slot limit (hostState.qused)
	kept    bool // the scratch keeps the hosts' values (keepVals)
	scratch *Scratch

	ledger *Ledger // the snapshot's, bound to its hosts; nil: none (keep.go)
	// ledgerOK: the running jobs' charges come from the ledger; inc: so
	// do the hosts' states, kept from the last cycle (ledger.go).
	ledgerOK, inc bool

	cu  *cuCycle  // compute units (cu.go); nil: none configured
	adv *advState // advance reservations; nil: none
	pre *preState // preemption (preempt.go)
	jg  *jgState  // job group limits (jobgroup.go); nil: none

	gangs *gangRun   // gang groups (gang.go); nil: none
	trial *gangTrial // the gang being tried (gangundo.go); nil: none

	pickBuf []pick     // fit's picks, read by place before it fits again
	pool    *cycleMaps // the scratch's maps (cyclemaps.go); nil: none

	open    openBits // hosts that may take a slot (open.go); nil: not built
	openOff bool     // placements walk every host (open.go)
	keptBuf []int    // allocateInto's kept hosts of a shared list
	// placedIdx are the host indices of place's last placement, whose
	// first allocation is placedAt (placed.go).
	placedIdx []int
	placedAt  *HostAlloc
}

// cloneVals copies a host's values for this cycle's changes, from the
// scratch memory when there is some.
func (c *cycle) cloneVals(v *resreq.Host) *resreq.Host {
	sc := c.scratch
	if sc == nil {
		return &resreq.Host{Num: slices.Clone(v.Num), Str: v.Str, Bool: v.Bool}
	}
	n := len(v.Num)
	if len(sc.nums)+n > cap(sc.nums) {
		// A new slab; the old one stays with the hosts that use it.
		sc.nums = make([]float64, 0, max(2*cap(sc.nums), n*len(c.hosts)))
	}
	num := sc.nums[len(sc.nums) : len(sc.nums)+n : len(sc.nums)+n]
	sc.nums = sc.nums[:len(sc.nums)+n]
	copy(num, v.Num)
	if len(sc.vals) == cap(sc.vals) {
		sc.vals = make([]resreq.Host, 0, max(2*cap(sc.vals), len(c.hosts)))
	}
	sc.vals = append(sc.vals, resreq.Host{Num: num, Str: v.Str, Bool: v.Bool})
	return &sc.vals[len(sc.vals)-1]
}

// keepVals reports whether the scratch keeps each host's copy of its
// values from one cycle to the next (its hosts, of the same schema, all
// get one each cycle), making it ready for this cycle's hosts.
func (c *cycle) keepVals() bool {
	sc := c.scratch
	if sc == nil {
		return false
	}
	if sc.keptSchema != c.schema || len(sc.kept) != len(c.hosts) {
		sc.keptSchema = c.schema
		sc.kept = make([]keptVals, len(c.hosts))
		sc.dirty = sc.dirty[:0]
		sc.gen++
	}
	c.kept = true
	return true
}

// keptVals returns host i's copy of its values v for this cycle's
// changes, with its free and total slots written at slotsIdx and maxIdx:
// last cycle's copy when v is the same (Scratch: values are not changed
// in place), with what last cycle wrote in it put back. The slots are
// written only when they differ from last cycle's, so that a cycle
// touches the copies of the hosts whose use changed, not all of them.
func (c *cycle) keptVals(i int, v *resreq.Host, slotsIdx, maxIdx, free, total int) *resreq.Host {
	sc := c.scratch
	k := &sc.kept[i]
	if k.src != v || len(k.vals.Num) != len(v.Num) {
		k.src = v
		sc.gen++
		k.vals = resreq.Host{Num: slices.Clone(v.Num), Str: v.Str, Bool: v.Bool}
		k.free, k.total = -1, -1
	}
	if len(sc.dirty) > 2 {
		// dirty starts with slotsIdx and maxIdx, written below.
		for _, x := range sc.dirty[2:] {
			k.vals.Num[x] = v.Num[x]
			if x == slotsIdx || x == maxIdx {
				k.free = -1 // an rusage of slots wrote there
			}
		}
	}
	if k.free != free || k.total != total {
		k.vals.Num[slotsIdx], k.vals.Num[maxIdx] = float64(free), float64(total)
		k.free, k.total = free, total
	}
	return &k.vals
}

type resInfo struct {
	name  string
	num   int // index in resreq.Host.Num; -1 when the schema lacks it
	gauge bool
	units bool
}

// Schedule runs one scheduling cycle over the snapshot. It does not modify
// the snapshot, and the same snapshot gives the same decision.
func Schedule(s *Snapshot) *Decision {
	if len(s.Claims) > 0 {
		return scheduleClaims(s) // claim.go
	}
	if pl := planGangs(s); pl != nil {
		return scheduleGangs(s, pl) // gang.go
	}
	return schedule(s, nil)
}

// schedule is one run of a cycle; gr is its gangs (nil: none).
func schedule(s *Snapshot, gr *gangRun) *Decision {
	c := newCycle(s, s.Scratch)
	c.gangs = gr
	for _, qi := range c.queueOrder() {
		if c.full() {
			break
		}
		c.resume(s.Queues[qi].Name)
		c.scheduleQueue(&s.Queues[qi], c.jobsOf[s.Queues[qi].Name])
	}
	for _, ji := range c.orphans {
		c.pend(s.Jobs[ji].Key, []string{"No such queue: " + s.Jobs[ji].Queue})
	}
	if c.ledger == nil || c.ledger.insts { // the ledger knows its hosts have none
		assignInstances(s, c.dec, c.byName)
	}
	c.dec.Buckets = len(c.buckets)
	c.keepBufs()
	return c.dec
}

func newCycle(s *Snapshot, scratch *Scratch) *cycle {
	c := scratch.cycle() // cyclemaps.go
	*c = cycle{
		s: s, schema: s.Schema, now: s.Now,
		dec: &Decision{Pending: map[JobKey][]string{}},
	}
	c.makeMaps(scratch) // cyclemaps.go
	if !s.NoReasons {
		c.dec.Pending = make(map[JobKey][]string, len(s.Jobs))
	}
	if c.schema == nil {
		c.schema, _ = resreq.NewSchema()
	}
	c.scratch = scratch
	if c.incremental() {
		c.hosts = c.ledger.cyc.hosts // the ledger restores them
	} else if scratch != nil && cap(scratch.hosts) >= len(s.Hosts) {
		// Last cycle's host states, emptied, their slices kept.
		c.hosts = scratch.hosts[:len(s.Hosts)]
		for i := range c.hosts {
			hs := &c.hosts[i]
			q := hs.qused
			if len(q) > 0 {
				clear(q)
			}
			*hs = hostState{uses: hs.uses[:0], holds: hs.holds[:0], avail: hs.avail[:0], qused: q}
		}
		scratch.nums, scratch.vals = scratch.nums[:0], scratch.vals[:0]
	} else {
		c.hosts = make([]hostState, len(s.Hosts))
		if scratch != nil {
			scratch.hosts = c.hosts
			scratch.nums, scratch.vals = scratch.nums[:0], scratch.vals[:0]
		}
	}
	if c.inc {
		c.byName = c.ledger.byName
	} else {
		c.byName = hostIndex(s.Hosts, scratch)
	}
	for i := range s.Queues {
		if s.Queues[i].HostSlotLimit > 0 {
			c.hostQ = true
		}
	}
	nset := len(s.Hosts)
	if c.inc {
		nset = 0 // kept from the last cycle
	}
	for i := range nset {
		h := &s.Hosts[i]
		vals := h.Values
		if vals == nil {
			vals = c.schema.NewHost()
		}
		c.hosts[i].h, c.hosts[i].vals = h, vals
		if len(h.GPUs) > 0 {
			c.anyGPU = true
			c.hosts[i].gpus = newGPUPool(h.GPUs)
		}
		if h.CPUs != nil {
			c.hosts[i].cpus = newCPUState(h.CPUs)
		}
	}
	for k, v := range s.Shared {
		c.shared[k] = v
	}
	for i := range s.Queues {
		q := &s.Queues[i]
		qs := c.newQState(q)
		if len(q.Hosts) > 0 {
			qs.hosts = c.hostSet(q.Hosts)
		}
		c.queues[q.Name] = qs
	}
	for i := range s.Limits {
		c.limits = append(c.limits, c.newLimit(&s.Limits[i]))
	}
	if !c.fromLedger() {
		c.accountRunning()
	}
	c.preemptSetup()
	// Select and order see the resources net of running jobs'
	// reservations, and slots / maxslots as the host's free and total job
	// slots (order[-slots] packs, select[slots>=4] needs free slots).
	slotsIdx, maxIdx := -1, -1
	if r, i, ok := c.schema.Lookup("slots"); ok && r.Kind == resreq.Numeric {
		slotsIdx = i
	}
	if r, i, ok := c.schema.Lookup("maxslots"); ok && r.Kind == resreq.Numeric {
		maxIdx = i
	}
	gpuIdx := -1
	if r, i, ok := c.schema.Lookup(ngpusPhysical); ok && r.Kind == resreq.Numeric && c.anyGPU {
		gpuIdx = i
	}
	keep := !c.inc && slotsIdx >= 0 && maxIdx >= 0 && c.keepVals()
	nset = len(c.hosts)
	if c.inc {
		nset = 0 // the ledger restored those that changed
	}
	for i := range nset {
		hs := &c.hosts[i]
		var cp *resreq.Host
		if slotsIdx >= 0 && maxIdx >= 0 {
			free := hs.h.MaxSlots - hs.used
			if hs.excl {
				free = 0
			}
			if keep {
				cp = c.keptVals(i, hs.vals, slotsIdx, maxIdx, max(0, free), hs.h.MaxSlots)
			} else {
				cp = c.cloneVals(hs.vals)
				cp.Num[slotsIdx] = float64(max(0, free))
				cp.Num[maxIdx] = float64(hs.h.MaxSlots)
			}
		}
		if !hs.excl {
			c.free += max(0, hs.h.MaxSlots-hs.used)
		}
		for ri, info := range c.resInfo {
			if info.num < 0 || hs.avail[ri] == hs.vals.Num[info.num] || math.IsNaN(hs.avail[ri]) {
				continue
			}
			if cp == nil {
				cp = c.cloneVals(hs.vals)
			}
			cp.Num[info.num] = hs.avail[ri]
		}
		if gpuIdx >= 0 && hs.gpus != nil {
			if cp == nil {
				cp = c.cloneVals(hs.vals)
			}
			cp.Num[gpuIdx] = float64(freeGPUs(hs))
		}
		if cp != nil {
			hs.vals = cp
		}
	}
	c.initCU()
	if len(c.pre.rel) > 0 || advMaySuspend(s) {
		// Preemption can give a job slots that running jobs hold: the
		// free slots bound nothing (Snapshot.OnlyPlacements' shortcuts).
		c.free = math.MaxInt / 2
	}
	if keep {
		// What the next cycle puts back before it writes its own.
		sc := c.scratch
		sc.dirty = append(sc.dirty[:0], slotsIdx, maxIdx)
		for _, info := range c.resInfo {
			if info.num >= 0 {
				sc.dirty = append(sc.dirty, info.num)
			}
		}
		if gpuIdx >= 0 {
			sc.dirty = append(sc.dirty, gpuIdx)
		}
	}
	for i := range s.Jobs {
		q := s.Jobs[i].Queue
		if _, ok := c.queues[q]; !ok {
			c.orphans = append(c.orphans, i)
			continue
		}
		c.jobsOf[q] = append(c.jobsOf[q], i)
	}
	c.adv = c.newAdv()
	c.jg = newJobGroups(s)
	return c
}

// accountRunning charges every running job.
func (c *cycle) accountRunning() {
	s := c.s
	// Index every host resource running jobs reserve, so that the values
	// select reads are net of their reservations.
	for i := range s.Running {
		for _, ha := range s.Running[i].Hosts {
			for _, u := range ha.Rusage {
				for _, r := range u.Resources {
					if _, ok := s.Shared[r.Name]; !ok {
						c.resIndex(r.Name)
					}
				}
			}
		}
	}
	for i := range s.Running {
		a := &s.Running[i]
		end := int64(never)
		if a.RunLimit > 0 {
			end = a.Start.Add(a.RunLimit).UnixNano()
		}
		v := allocConsumers(a)
		c.account(&v, fairAccount(a.User, a.Account), nil, a.Start, end, a.Exclusive, a.Hosts)
	}
}

// hostIndex maps host names to their index in hosts; a scratch keeps
// the map for the next cycle's same hosts.
func hostIndex(hosts []Host, sc *Scratch) map[string]int {
	if sc != nil && len(sc.names) == len(hosts) && sc.byName != nil {
		same := true
		for i := range hosts {
			if hosts[i].Name != sc.names[i] {
				same = false
				break
			}
		}
		if same {
			return sc.byName
		}
	}
	m := make(map[string]int, len(hosts))
	for i := range hosts {
		m[hosts[i].Name] = i
	}
	if sc != nil {
		sc.byName, sc.names = m, sc.names[:0]
		for i := range hosts {
			sc.names = append(sc.names, hosts[i].Name)
		}
	}
	return m
}

// queueOrder returns the queues by priority, highest first, ties in the
// snapshot's order.
func (c *cycle) queueOrder() []int {
	idx := make([]int, len(c.s.Queues))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return c.s.Queues[b].Priority - c.s.Queues[a].Priority })
	return idx
}

// resIndex returns the index of a host resource in hostState.avail,
// adding it (with every host's current value) the first time.
func (c *cycle) resIndex(name string) int {
	if i, ok := c.resIdx[name]; ok {
		return i
	}
	if c.inc {
		return c.incResIndex(name)
	}
	info := resInfo{name: name, num: -1, gauge: gauges[name]}
	if r, i, ok := c.schema.Lookup(name); ok && r.Kind == resreq.Numeric {
		info.num, info.units = i, r.Units
	}
	i := len(c.resInfo)
	c.resIdx[name] = i
	c.resInfo = append(c.resInfo, info)
	// The hosts whose avail is full grow it out of one block, not one
	// allocation each (a site's ten resources were 40,000 at 10,000 hosts).
	need := 0
	for h := range c.hosts {
		if a := c.hosts[h].avail; len(a) == cap(a) {
			need += max(8, 2*len(a))
		}
	}
	blk := make([]float64, 0, need)
	for h := range c.hosts {
		v := math.NaN()
		if info.num >= 0 {
			v = c.hosts[h].vals.Num[info.num]
		}
		hs := &c.hosts[h]
		if len(hs.avail) == cap(hs.avail) {
			l, n := len(blk), max(8, 2*len(hs.avail))
			grown := blk[l : l+len(hs.avail) : l+n]
			copy(grown, hs.avail)
			blk, hs.avail = blk[:l+n], grown
		}
		hs.avail = append(hs.avail, v)
	}
	return i
}

// amount returns what usage set reserves of resource r on one host after
// elapsed, given the slots there and whether it is the part's lead host.
// shared selects the cluster-wide rule: a per-host or per-job amount is
// taken once per job (on the lead host).
func amount(set resreq.UsageSet, r string, elapsed time.Duration, slots int, lead, shared bool) float64 {
	for i := range set {
		for _, ru := range set[i].Resources {
			if ru.Name != r {
				continue
			}
			a, _ := set[i].AmountAt(r, elapsed)
			switch {
			case ru.Method == "task":
				return a * float64(slots)
			case ru.Method == "job" || shared:
				if lead {
					return a
				}
				return 0
			}
			return a
		}
	}
	return 0
}

// account charges an allocation (running, or placed in this cycle) to
// hosts, queues, limits and shared resources.
// lims are the limits v matches, nil to find them.
func (c *cycle) account(v *consumers, acct string, lims []*limitState, start time.Time, end int64, excl bool, has []HostAlloc) {
	user, queue := v[kUser], v[kQueue]
	if end != never && c.ends != nil && end > c.now.UnixNano() {
		if i, found := slices.BinarySearch(c.ends, end); !found {
			c.ends = slices.Insert(c.ends, i, end)
		}
	}
	elapsed := c.now.Sub(start)
	total := 0
	qs := c.queues[queue]
	if lims == nil {
		lims = c.matching(v)
	}
	for k := range has {
		ha := &has[k] // not copied: a host of a job of hundreds
		total += ha.Slots
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if _, ok := c.s.Shared[r.Name]; ok {
					c.shared[r.Name] -= amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, true)
				}
			}
		}
		h, ok := c.hostOf(has, k)
		if !ok {
			continue // a host gone from the configuration
		}
		hs := &c.hosts[h]
		c.touch(h)
		hs.used += ha.Slots
		u := use{end: end, slots: ha.Slots}
		if excl {
			hs.excl = true
			u.slots = max(u.slots, hs.h.MaxSlots)
		}
		hs.uses = append(hs.uses, u)
		if c.hostQ {
			if hs.qused == nil {
				hs.qused = map[string]int{}
			}
			hs.qused[queue] += ha.Slots
		}
		if hs.gpus != nil {
			c.chargeGPUs(hs, ha)
		}
		if hs.cpus != nil {
			c.chargeCPUs(hs, ha, excl)
		}
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if _, ok := c.s.Shared[r.Name]; ok {
					continue
				}
				if hs.gpus != nil && r.Name == ngpusPhysical {
					continue // the devices are the accounting
				}
				ri := c.resIndex(r.Name)
				at := elapsed
				if at != 0 && hs.h.isInstance(r.Name) { // a placement's is 0: no look-up
					at = 0 // held whole until the job ends (instances.go)
				}
				a := amount(ha.Rusage, r.Name, at, ha.Slots, ha.Lead, false)
				charge := a
				if c.resInfo[ri].gauge {
					charge = max(0, a-ha.Used[r.Name])
				}
				hs.avail[ri] -= charge
			}
		}
	}
	for _, ls := range lims {
		c.charge(ls, v, has, elapsed)
	}
	if qs != nil {
		qs.used += total
		qs.uused[user] += total
		if qs.q.Fairshare != nil {
			qs.slots[acct] += total
			qs.run[acct] += float64(total) * max(0, elapsed.Hours())
		}
	}
}

// hostSet expands host names, group names, "all" and "~name" exclusions
// into a set.
func (c *cycle) hostSet(names []string) []bool {
	key := strings.Join(names, "\x00")
	if s, ok := c.sets[key]; ok {
		return s
	}
	if s, ok := c.keptSet(key); ok {
		c.sets[key] = s
		return s
	}
	set := hostSet(names, c.byName, len(c.hosts), c.s.HostGroups)
	c.sets[key] = set
	c.keepSet(key, set)
	return set
}

func (c *cycle) pend(k JobKey, why []string) {
	if !c.s.NoReasons {
		c.dec.Pending[k] = why
	}
}

// scheduleQueue tries the queue's jobs: by -sp priority then submission
// order, or by fairshare between accounts (users, or the groups -G names).
func (c *cycle) scheduleQueue(q *Queue, jobs []int) {
	s := c.s
	slices.SortStableFunc(jobs, func(a, b int) int { return s.Jobs[b].Priority - s.Jobs[a].Priority })
	if q.Fairshare == nil {
		for _, ji := range jobs {
			if c.full() {
				return
			}
			c.tryJob(ji)
		}
		return
	}
	qs := c.queues[q.Name]
	byUser := map[string][]int{}
	var users []string
	for _, ji := range jobs {
		u := fairAccount(s.Jobs[ji].User, s.Jobs[ji].Account)
		if _, ok := byUser[u]; !ok {
			users = append(users, u)
		}
		byUser[u] = append(byUser[u], ji)
	}
	slices.Sort(users)
	h := &userHeap{}
	for _, u := range users {
		h.items = append(h.items, userTurn{user: u, prio: c.dynamicPriority(qs, u), jobs: byUser[u]})
	}
	heap.Init(h)
	for h.Len() > 0 && !c.full() {
		top := &h.items[0]
		ji := top.jobs[0]
		top.jobs = top.jobs[1:]
		if c.tryJob(ji) {
			h.items[0].prio = c.dynamicPriority(qs, h.items[0].user)
		}
		if len(h.items[0].jobs) == 0 {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
}

// userTurn is a user's place in a fairshare queue: its dynamic priority
// and its pending jobs in order.
type userTurn struct {
	user string
	prio float64
	jobs []int
}

// userHeap orders users by dynamic priority, highest first, ties by name.
type userHeap struct{ items []userTurn }

func (h *userHeap) Len() int { return len(h.items) }
func (h *userHeap) Less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.user < b.user
}
func (h *userHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *userHeap) Push(x any)    { h.items = append(h.items, x.(userTurn)) }
func (h *userHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// dynamicPriority is an account's fairshare priority in a queue this
// cycle.
func (c *cycle) dynamicPriority(qs *qstate, acct string) float64 {
	return DynamicPriority(qs.q.Fairshare, acct, c.now, qs.run[acct], qs.slots[acct])
}

// History is an account's past use (finished jobs' CPU and run time)
// decayed to now: one hour counts 0.1 hour after HistHours hours.
func (fs *Fairshare) History(user string, now time.Time) (cpu, run time.Duration) {
	u, ok := fs.Usage[user]
	if !ok {
		return 0, 0
	}
	hist := fs.HistHours
	if hist <= 0 {
		hist = 5
	}
	d := math.Pow(0.1, max(0, now.Sub(u.At).Hours())/hist)
	return time.Duration(float64(u.CPU) * d), time.Duration(float64(u.Run) * d)
}

// DynamicPriority is LSF's fairshare priority of an account (a user, or a
// user group charged with -G) in a queue:
// shares / (cpu*CPU_TIME_FACTOR + run*RUN_TIME_FACTOR +
// (1+slots)*RUN_JOB_FACTOR), times in hours, past usage decayed to now.
// runHours and slots are the user's running jobs' slot-hours so far and
// slots held (bqueues -r and xcetop show it too).
func DynamicPriority(fs *Fairshare, user string, now time.Time, runHours float64, slots int) float64 {
	shares, ok := fs.Shares[user]
	if !ok {
		shares, ok = fs.Shares["default"]
		if !ok {
			shares = 1
		}
	}
	cf, rf, jf := fs.CPUTimeFactor, fs.RunTimeFactor, fs.RunJobFactor
	if cf == 0 {
		cf = 0.7
	}
	if rf == 0 {
		rf = 0.7
	}
	if jf == 0 {
		jf = 3
	}
	cpuD, runD := fs.History(user, now)
	cpu, run := cpuD.Hours(), runD.Hours()
	run += runHours
	den := cpu*cf + run*rf + float64(1+slots)*jf
	return float64(shares) / den
}
