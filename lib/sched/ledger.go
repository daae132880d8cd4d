package sched

import (
	"math"
	"slices"

	"xce/lib/resreq"
)

// Ledger keeps what the running jobs hold on each host and in each
// queue from one cycle to the next (Snapshot.Ledger), so that a cycle
// starts from it instead of charging every running job again: a
// simulator runs a cycle per event, each with the same hosts and a few
// jobs more or less.
//
// The caller says what changed: Start for each job it adds to
// Snapshot.Running, End for each one it takes out, Reset when a host
// changes (name, state, slots, values, devices), or the host groups,
// the schema or the shared resources do. The Allocs it holds must not
// change while they are in Running. The decision is the same with a ledger or without:
// a cycle uses it only where its figures are exactly those that
// charging every running job gives (whole numbers, which sum the same in
// any order; reservations that do not change with time; hosts without
// GPU or core lists) and charges every running job otherwise. What
// changes with the clock (fairshare's run time), limits and shared
// resources are still worked out from Running each cycle. Without
// preemption, the hosts' states are kept too: a cycle restores only the
// hosts whose charges changed and those the last cycle placed jobs or
// held slots on; and a requirement's static host checks and a host
// order that read no value a cycle writes are kept (keep.go).
//
// A Ledger serves one caller's cycles, one at a time. The zero value is
// ready.
type Ledger struct {
	ops []ledgerOp // Start and End since the last cycle, in order

	bound   bool   // the state below is that of the last cycle's snapshot
	inexact int    // running jobs whose figures are not exact (see above)
	devices bool   // a host lists GPUs or cores
	insts   bool   // a host has named instances (instances.go)
	hosts   []Host // the snapshot's, as bound (Reset when one changes)
	schema  *resreq.Schema
	shared  []string // the names of Snapshot.Shared, sorted
	byName  map[string]int
	hs      []ledgerHost
	res     []resInfo // host resources charged, in the order first seen
	resIdx  map[string]int
	base    [][]float64 // by host and resource: the host's value
	queues  map[string]*ledgerQueue
	qnames  []string // the queues by ledgerQueue.idx
	jobs    map[JobKey]*ledgerJob
	spare   []*ledgerJob // ended jobs' records, for the next starts
	// The hosts' charges of the starts and ends synced, applied
	// together (ledgerapply.go), and the ended jobs' records until then.
	pend  []pendApply
	ended []*ledgerJob
	// statics are the cycles' static host checks (place.go) that the
	// next cycle may take as they are (keep.go); emptied when the ledger
	// is filled again.
	statics map[string]*static
	orders  map[string][]int  // host orders by order[] keys no cycle writes (keep.go)
	sets    map[string][]bool // host lists' sets (keep.go)
	arena   []int             // the cycle's host lists (keep.go's ints)
	// Requirements' forms the cycles compute again and again, by the
	// pointer the caller shares between jobs (keep.go).
	reqStr   map[*resreq.ResReq]string
	defaults map[*resreq.ResReq]*resreq.ResReq
	simple   map[*resreq.Simple]string
	odd      bool // a job reserves slots or maxslots, which cycles write

	free    int       // the free slots of the hosts together, as a cycle counts them
	changed hostMarks // hosts whose charges changed since the last cycle, and how often
	// conf marks the hosts a start charged just as the last cycle's
	// commit of its placement did (restorelite.go).
	conf []bool
	cyc  incHosts

	// hints are the last cycle's placements' host indices (placed.go).
	hints   []ledgerHint
	hintIdx []int
	hintPos int
}

// incHosts are the hosts' states of the last cycle that took them from
// the ledger, kept for the next one (incremental cycles).
type incHosts struct {
	valid   bool
	hosts   []hostState
	vals    []resreq.Host  // each host's values as select reads them
	valsSrc []*resreq.Host // the Values each was copied from
	nilVals *resreq.Host   // for hosts without Values
	touched hostMarks      // hosts the last cycle changed (placements, holds), and how often
	open    openBits       // the hosts that may take a slot (open.go)
	// stale are the hosts whose values (vals) a cycle sets from their
	// state when it reads them (restorelite.go); slotsIdx and maxIdx
	// are the schema's slots and maxslots then.
	stale            openBits
	slotsIdx, maxIdx int
	nBefore          int  // hosts whose values waited in valsBefore (tests)
	nres             int  // resources its hosts' avail hold
	hostQ            bool // its hosts hold qused
}

type ledgerOp struct {
	end bool
	key JobKey
	a   Alloc
}

// ledgerHost is 128 bytes, two cache lines: the counts and the lists'
// headers, then the lists' first room (restorelite.go) and the
// resources.
type ledgerHost struct {
	max    int32 // the host's MaxSlots, as bound
	used   int32
	excl   int32 // exclusive jobs
	uses   []use
	queues []queueSlots
	room   [slabUses]use // uses' first room
	qroom  [1]queueSlots // queues' first room
	avail  []float64     // by Ledger.res
}

// queueSlots are the slots a queue's jobs hold on a host; q is the
// queue's index in Ledger.qnames.
type queueSlots struct {
	q, n int32
}

type ledgerQueue struct {
	idx   int32 // in Ledger.qnames
	used  int
	users map[string]int // slots by user
	accts map[string]int // slots by fairshare account
}

// ledgerJob is what one running job was charged.
type ledgerJob struct {
	queue, user, acct string
	total             int
	on                []ledgerCharge
	res               []resCharge // its charges of host resources, in on's order
	inexact           bool        // a figure that is not exact (see Ledger)
	end               int64       // when its uses end (never: unknown)
	excl              bool        // it runs exclusive
	qi                int32       // its queue's index in Ledger.qnames
}

// ledgerCharge is a job's charge of one host's slots (its use's end and
// exclusiveness are the job's, its resources in the job's res): small,
// as a job of hundreds of hosts writes one per host at its start and
// reads them at its end.
type ledgerCharge struct {
	h        int32
	slots    int32
	useSlots int32 // the slots its use takes (all of them when exclusive)
}

// resCharge is a job's charge of a host resource on host h.
type resCharge struct {
	h   int32
	ri  int32
	amt float64
}

// NewLedger returns an empty ledger; the first cycle that reads it fills
// it from its snapshot's Running (the zero Ledger does the same).
func NewLedger() *Ledger { return &Ledger{} }

// Start records that a job was added to Running.
func (l *Ledger) Start(a *Alloc) { l.ops = append(l.ops, ledgerOp{key: a.Job, a: *a}) }

// End records that the job was taken out of Running.
func (l *Ledger) End(k JobKey) { l.ops = append(l.ops, ledgerOp{end: true, key: k}) }

// Reset makes the next cycle fill the ledger again from its snapshot's
// Running (after a host, the schema or the shared resources changed).
func (l *Ledger) Reset() {
	l.bound = false
	clear(l.ops)
	l.ops = l.ops[:0]
}

// exactLimit bounds the whole numbers a ledger keeps: sums and
// differences of them are exact in a float64, in any order.
const exactLimit = 1 << 50

func exactNum(v float64) bool {
	return math.IsNaN(v) || v == math.Trunc(v) && math.Abs(v) < exactLimit
}

// timeless reports whether a usage set reserves the same amounts for as
// long as the job runs (no duration, no decay, one phase).
func timeless(set resreq.UsageSet) bool {
	for i := range set {
		if len(set[i].Durations) > 0 || len(set[i].Decays) > 0 {
			return false
		}
		for _, r := range set[i].Resources {
			if len(r.Amounts) > 1 {
				return false
			}
		}
	}
	return true
}

// sync brings the ledger to the snapshot's Running and reports whether
// the cycle may take its figures. A ledger not told of a change, or
// one a job with inexact figures left (taking them back may not give
// the same bits), is filled again from Running.
func (l *Ledger) sync(s *Snapshot, schema *resreq.Schema) bool {
	if l.bound && l.sameBinding(s, schema) {
		for i := range l.ops {
			op := &l.ops[i]
			if op.end {
				l.end(op.key)
			} else {
				l.start(&op.a)
			}
			if !l.bound {
				break
			}
		}
		l.applyPending() // ledgerapply.go
	} else {
		l.bound = false
	}
	clear(l.ops)
	l.ops = l.ops[:0]
	l.dropHints()
	if !l.bound || len(l.jobs) != len(s.Running) {
		l.bind(s, schema)
	}
	if len(l.jobs) != len(s.Running) {
		l.bound = false // two allocations of one job
		return false
	}
	return l.inexact == 0 && !l.devices && !l.odd
}

func (l *Ledger) sameBinding(s *Snapshot, schema *resreq.Schema) bool {
	if len(s.Hosts) != len(l.hosts) || schema != l.schema || len(s.Shared) != len(l.shared) {
		return false
	}
	if len(s.Hosts) > 0 && &s.Hosts[0] != &l.hosts[0] {
		return false
	}
	for _, k := range l.shared {
		if _, ok := s.Shared[k]; !ok {
			return false
		}
	}
	return true
}

// bind fills the ledger from the snapshot: its hosts, then every running
// job.
func (l *Ledger) bind(s *Snapshot, schema *resreq.Schema) {
	l.bound, l.inexact, l.devices = true, 0, false
	l.schema, l.hosts = schema, s.Hosts
	l.insts = anyInstances(s.Hosts)
	l.shared = l.shared[:0]
	for k := range s.Shared {
		l.shared = append(l.shared, k)
	}
	slices.Sort(l.shared)
	l.byName = make(map[string]int, len(s.Hosts))
	l.hs = make([]ledgerHost, len(s.Hosts))
	l.slabHosts() // restorelite.go
	l.base = make([][]float64, len(s.Hosts))
	l.res, l.resIdx = nil, map[string]int{}
	l.queues, l.qnames = map[string]*ledgerQueue{}, l.qnames[:0]
	l.jobs = make(map[JobKey]*ledgerJob, len(s.Running))
	l.statics, l.orders, l.sets, l.odd = map[string]*static{}, map[string][]int{}, map[string][]bool{}, false
	l.reqStr, l.defaults, l.simple = map[*resreq.ResReq]string{}, map[*resreq.ResReq]*resreq.ResReq{}, map[*resreq.Simple]string{}
	l.cyc.valid = false
	clear(l.cyc.valsSrc) // copy the values afresh
	l.changed.size(len(s.Hosts))
	l.conf = make([]bool, len(s.Hosts))
	l.free = 0
	for i := range s.Hosts {
		h := &s.Hosts[i]
		l.byName[h.Name] = i
		l.hs[i].max = int32(h.MaxSlots)
		l.free += l.contrib(i)
		if len(h.GPUs) > 0 || h.CPUs != nil {
			// Devices and cores are charged one by one, by the cycle.
			l.devices = true
		}
	}
	for i := range s.Running {
		l.start(&s.Running[i])
	}
	l.applyPending()
}

// resIndex returns the ledger's index of a host resource, adding it with
// every host's value the first time.
func (l *Ledger) resIndex(name string) int {
	if i, ok := l.resIdx[name]; ok {
		return i
	}
	info := resInfo{name: name, num: -1, gauge: gauges[name]}
	if r, i, ok := l.schema.Lookup(name); ok && r.Kind == resreq.Numeric {
		info.num, info.units = i, r.Units
		if r.Name == "slots" || r.Name == "maxslots" {
			l.odd = true // its value is the cycle's, not the host's
		}
	}
	i := len(l.res)
	l.resIdx[name] = i
	l.res = append(l.res, info)
	for h := range l.hs {
		v := math.NaN()
		if vals := l.hosts[h].Values; info.num >= 0 && vals != nil {
			v = vals.Num[info.num]
		}
		l.base[h] = append(l.base[h], v)
		l.hs[h].avail = append(l.hs[h].avail, v)
	}
	return i
}

// start charges a running job, as the cycle's account does.
func (l *Ledger) start(a *Alloc) {
	if _, dup := l.jobs[a.Job]; dup {
		l.bound = false // told twice: fill again
		return
	}
	j := l.newJob(len(a.Hosts))
	j.queue, j.user, j.acct = a.Queue, a.User, fairAccount(a.User, a.Account)
	j.excl = a.Exclusive
	end := int64(never)
	if a.RunLimit > 0 {
		end = a.Start.Add(a.RunLimit).UnixNano()
	}
	j.end = end
	next := -1 // the index after the last host's
	hint, hEnd, hExcl := l.hinted(a.Hosts)
	// Charged as the commit charged its hosts (restorelite.go).
	same := hint != nil && hEnd == end && hExcl == a.Exclusive
	for k := range a.Hosts {
		ha := &a.Hosts[k] // not copied
		j.total += ha.Slots
		if hint != nil {
			next = hint[k] // the host the cycle placed on, checked below
		}
		// Placements often take hosts in the snapshot's order: the next
		// host's name (unique, as byName has them) is checked before
		// the name is hashed.
		h, ok := next, next >= 0 && next < len(l.hosts) && l.hosts[next].Name == ha.Host
		if !ok {
			h, ok = l.byName[ha.Host]
		}
		if !ok {
			continue // a host gone from the configuration
		}
		next = h + 1
		if same && h == hint[k] {
			l.conf[h] = true
		}
		ch := ledgerCharge{h: int32(h), slots: int32(ha.Slots), useSlots: int32(ha.Slots)}
		if a.Exclusive {
			ch.useSlots = int32(max(ha.Slots, int(l.hs[h].max)))
		}
		if len(ha.Rusage) > 0 && !timeless(ha.Rusage) {
			j.inexact = true
		}
		for _, u := range ha.Rusage {
			for _, r := range u.Resources {
				if slices.Contains(l.shared, r.Name) {
					continue
				}
				ri := l.resIndex(r.Name)
				amt := amount(ha.Rusage, r.Name, 0, ha.Slots, ha.Lead, false)
				charge := amt
				if l.res[ri].gauge {
					charge = max(0, amt-ha.Used[r.Name])
				}
				if !exactNum(charge) || !exactNum(l.base[h][ri]) {
					j.inexact = true
				}
				j.res = append(j.res, resCharge{int32(h), int32(ri), charge})
			}
		}
		j.on = append(j.on, ch)
	}
	l.pend = append(l.pend, pendApply{j: j, sign: 1}) // applied by applyPending
	q := l.queues[a.Queue]
	if q == nil {
		q = &ledgerQueue{idx: int32(len(l.qnames)), users: map[string]int{}, accts: map[string]int{}}
		l.queues[a.Queue] = q
		l.qnames = append(l.qnames, a.Queue)
	}
	j.qi = q.idx
	q.used += j.total
	q.users[j.user] += j.total
	q.accts[j.acct] += j.total
	l.jobs[a.Job] = j
	if j.inexact {
		l.inexact++
	}
}

// end takes back what start charged.
func (l *Ledger) end(k JobKey) {
	j, ok := l.jobs[k]
	if !ok {
		l.bound = false
		return
	}
	delete(l.jobs, k)
	if j.inexact {
		// Its charges taken back may leave other bits than charging
		// the others afresh: fill again.
		l.bound = false
		return
	}
	l.pend = append(l.pend, pendApply{j: j, sign: -1})
	q := l.queues[j.queue]
	q.used -= j.total
	decCount(q.users, j.user, j.total)
	decCount(q.accts, j.acct, j.total)
	l.ended = append(l.ended, j) // spare once applyPending took its charges back
}

// newJob returns an empty job record, an ended job's when there is one
// (a simulator starts and ends a job per event: records and their
// charge lists are reused, not made anew each time).
func (l *Ledger) newJob(nhosts int) *ledgerJob {
	n := len(l.spare)
	if n == 0 {
		return &ledgerJob{on: make([]ledgerCharge, 0, nhosts)}
	}
	j := l.spare[n-1]
	l.spare[n-1] = nil
	l.spare = l.spare[:n-1]
	*j = ledgerJob{on: j.on[:0], res: j.res[:0]} // emptied by end
	return j
}

func decCount(m map[string]int, k string, n int) {
	if m[k] -= n; m[k] == 0 {
		delete(m, k)
	}
}

// contrib is what host h adds to the free slots a cycle counts.
func (l *Ledger) contrib(h int) int {
	lh := &l.hs[h]
	if lh.excl > 0 {
		return 0
	}
	return max(0, int(lh.max-lh.used))
}

// apply charges (sign 1) or takes back (-1) one host's part of a job,
// and returns how the free slots changed; the host is marked in
// l.changed.
func (l *Ledger) apply(ch *ledgerCharge, j *ledgerJob, sign int) int {
	h, queue := int(ch.h), j.qi
	lh := &l.hs[h]
	free := -l.contrib(h)
	l.changed.mark(h)
	slots, u := ch.slots*int32(sign), use{end: j.end, slots: int(ch.useSlots)}
	lh.used += slots
	if j.excl {
		lh.excl += int32(sign)
	}
	if sign > 0 {
		lh.uses = append(lh.uses, u)
	} else if k := slices.Index(lh.uses, u); k >= 0 {
		// Uses with the same end and slots are alike: any one goes.
		last := len(lh.uses) - 1
		lh.uses[k] = lh.uses[last]
		lh.uses = lh.uses[:last]
	}
	qs := lh.queues
	k := 0
	for k < len(qs) && qs[k].q != queue {
		k++
	}
	if k == len(qs) {
		if slots != 0 { // a queue's entry is there only while it holds slots
			lh.queues = append(qs, queueSlots{q: queue, n: slots})
		}
	} else if n := qs[k].n + slots; n != 0 {
		// The sum is written, not added in place: the entry is read
		// whole right after, and a load of a store still in flight
		// that it only partly covers waits for the store.
		qs[k].n = n
	} else {
		// The order of a host's queues is not read: the last takes its place.
		last := len(qs) - 1
		qs[k] = qs[last]
		qs[last] = queueSlots{}
		lh.queues = qs[:last]
	}
	return free + l.contrib(h)
}

// incremental syncs the snapshot's ledger and reports whether the cycle
// takes its hosts from the ledger's kept states, restoring only those
// whose charges changed or that the last cycle changed, instead of
// setting every host up (c.inc). Not with preemption, which releases
// and charges running jobs within a cycle.
func (c *cycle) incremental() bool {
	s := c.s
	l := s.Ledger
	if l == nil || s.Schema == nil {
		return false
	}
	c.ledgerOK = l.sync(s, s.Schema)
	if l.bound {
		c.ledger = l // its hosts are the snapshot's (keep.go)
		if len(l.reqStr)+len(l.defaults)+len(l.simple) > 1<<14 {
			// A caller that does not share requirements between
			// cycles: keep them from growing without end.
			clear(l.reqStr)
			clear(l.defaults)
			clear(l.simple)
		}
		c.reqStr = l.reqStr
		l.arena = l.arena[:0] // the last cycle's lists are gone with it
	}
	if !c.ledgerOK || !incrementalOK(s) {
		l.cyc.valid = false
		l.clearChanged()
		return false
	}
	if len(l.cyc.hosts) != len(s.Hosts) {
		l.cyc.hosts = make([]hostState, len(s.Hosts))
		l.cyc.vals = make([]resreq.Host, len(s.Hosts))
		l.cyc.valsSrc = make([]*resreq.Host, len(s.Hosts))
		l.cyc.open = make(openBits, (len(s.Hosts)+63)>>6)
		l.cyc.stale = make(openBits, (len(s.Hosts)+63)>>6)
		l.cyc.touched.size(len(s.Hosts))
		l.cyc.valid = false
		l.cyc.slab(c.schema) // restorelite.go
	}
	c.inc = true
	return true
}

func incrementalOK(s *Snapshot) bool {
	for i := range s.Queues {
		if p := &s.Queues[i].Preempt; len(p.Preemptive) > 0 || len(p.Preemptable) > 0 {
			return false
		}
	}
	for i := range s.Running {
		if s.Running[i].Preempt.Suspended {
			return false
		}
	}
	return true
}

func (l *Ledger) clearChanged() {
	for _, h := range l.changed.list {
		l.conf[h] = false
	}
	l.changed.clear()
}

// touch records that the cycle changed host h's state: the next
// incremental cycle restores it.
func (c *cycle) touch(h int) {
	if c.trial != nil {
		c.noteHost(h) // a gang's trial (gangundo.go)
	}
	if c.inc {
		ic := &c.ledger.cyc
		if ic.stale.has(h) {
			c.valsBefore(h) // from the state before the change (restorelite.go)
		}
		ic.touched.mark(h)
	}
}

// restoreHosts brings the kept hosts' states to the ledger's (all of
// them when they were not kept for this ledger's figures).
func (c *cycle) restoreHosts() {
	l := c.ledger
	ic := &l.cyc
	slotsIdx, maxIdx := -1, -1
	if r, i, ok := c.schema.Lookup("slots"); ok && r.Kind == resreq.Numeric {
		slotsIdx = i
	}
	if r, i, ok := c.schema.Lookup("maxslots"); ok && r.Kind == resreq.Numeric {
		maxIdx = i
	}
	if ic.nilVals == nil {
		ic.nilVals = c.schema.NewHost() // made here: restoreHost may run in parallel
	}
	ic.slotsIdx, ic.maxIdx = slotsIdx, maxIdx
	if !ic.valid || ic.nres != len(l.res) || ic.hostQ != c.hostQ {
		c.restoreAll(slotsIdx, maxIdx) // ledgerapply.go
	} else {
		for _, h := range ic.touched.list {
			if l.changed.n[h] == 0 {
				l.changed.mark(h) // once: a lite restore needs one charge (restorelite.go)
			}
		}
		c.restoreHostList(l.changed.list, slotsIdx, maxIdx) // restorelite.go
	}
	l.clearChanged()
	ic.touched.clear()
	ic.valid, ic.nres, ic.hostQ = true, len(l.res), c.hostQ
	c.free = l.free
}

// restoreHost sets host i's state from the ledger, and the values select and
// order read as a cycle that charges every job sets them.
func (c *cycle) restoreHost(i, slotsIdx, maxIdx int) {
	l := c.ledger
	hs := &c.hosts[i]
	c.restoreState(i, hs, &l.hs[i])
	l.cyc.open.setFrom(i, hs)
	c.valsLater(i) // restorelite.go
}

// restoreState sets host i's state (hs) from the ledger's (lh).
func (c *cycle) restoreState(i int, hs *hostState, lh *ledgerHost) {
	h := &c.s.Hosts[i]
	// Pointers written only where they change: a write costs a
	// barrier while the collector runs, and most are the same.
	if hs.h != h {
		hs.h = h
	}
	hs.holds = hs.holds[:0]
	if hs.gpus != nil || hs.cpus != nil {
		hs.gpus, hs.cpus = nil, nil
	}
	c.chargesFrom(hs, lh)
}

// restoreVals sets the values select and order read of host i from its
// state, as a cycle that charges every job sets them.
func (c *cycle) restoreVals(i, slotsIdx, maxIdx int) {
	l := c.ledger
	hs, h := &c.hosts[i], &c.s.Hosts[i]
	src := h.Values
	if src == nil {
		src = l.cyc.nilVals // made by restoreHosts
	}
	write := slotsIdx >= 0 && maxIdx >= 0
	for ri := 0; ri < len(c.resInfo) && !write; ri++ {
		if info := c.resInfo[ri]; info.num >= 0 && hs.avail[ri] != src.Num[info.num] && !math.IsNaN(hs.avail[ri]) {
			write = true
		}
	}
	if !write {
		if hs.vals != src {
			hs.vals = src
		}
		return
	}
	v := &l.cyc.vals[i]
	if l.cyc.valsSrc[i] != src || len(v.Num) != len(src.Num) {
		v.Num = append(v.Num[:0], src.Num...)
		v.Str, v.Bool = src.Str, src.Bool
		l.cyc.valsSrc[i] = src
	}
	// Only the slots and the charged resources can differ from src.
	if slotsIdx >= 0 && maxIdx >= 0 {
		used, excl := hs.used, hs.excl
		if hs.pre {
			used, excl = hs.preUsed, hs.preExcl // restorelite.go's valsBefore
		}
		free := h.MaxSlots - used
		if excl {
			free = 0
		}
		v.Num[slotsIdx], v.Num[maxIdx] = float64(max(0, free)), float64(h.MaxSlots)
	}
	for ri, info := range c.resInfo {
		if info.num < 0 {
			continue
		}
		if a := hs.avail[ri]; a != src.Num[info.num] && !math.IsNaN(a) {
			v.Num[info.num] = a
		} else {
			v.Num[info.num] = src.Num[info.num]
		}
	}
	if hs.vals != v {
		hs.vals = v
	}
}

// chargesFrom sets a host's charges (slots, uses, resources, queues'
// slots) to the ledger's.
func (c *cycle) chargesFrom(hs *hostState, lh *ledgerHost) {
	hs.used, hs.excl = int(lh.used), lh.excl > 0
	// Copies: the cycle appends to them. Most hosts hold no use or one
	// and no resource: those are set without a call to copy.
	switch n := len(lh.uses); {
	case n == 0:
		hs.uses = hs.uses[:0]
	case n == 1 && cap(hs.uses) > 0:
		hs.uses = hs.uses[:1]
		hs.uses[0] = lh.uses[0]
	default:
		hs.uses = append(hs.uses[:0], lh.uses...)
	}
	if len(lh.avail) == 0 {
		hs.avail = hs.avail[:0]
	} else {
		hs.avail = append(hs.avail[:0], lh.avail...)
	}
	if len(hs.qused) > 0 {
		clear(hs.qused) // not called on an empty map: a call per host restored
	}
	if c.hostQ && len(lh.queues) > 0 {
		if hs.qused == nil {
			hs.qused = map[string]int{}
		}
		for _, q := range lh.queues {
			hs.qused[c.ledger.qnames[q.q]] = int(q.n)
		}
	}
}

// incResIndex is resIndex in an incremental cycle: the resource goes in
// the ledger's, whose order the kept hosts' avail follow.
func (c *cycle) incResIndex(name string) int {
	if i, ok := c.resIdx[name]; ok {
		return i
	}
	l := c.ledger
	ri := l.resIndex(name)
	if l.res[ri].num >= 0 {
		// The values of the hosts changed so far are set from their
		// state before the change, which holds no charge of it yet:
		// later charges of it would be read (restorelite.go).
		for _, h := range l.cyc.touched.list {
			if c.hosts[h].pre {
				c.freshen(h)
			}
		}
	}
	c.resIdx[name] = ri
	c.resInfo = append(c.resInfo, l.res[ri])
	for h := range c.hosts {
		c.hosts[h].avail = append(c.hosts[h].avail, l.base[h][ri])
	}
	l.cyc.nres = len(l.res)
	return ri
}

// fromLedger gives the cycle's hosts and queues the charges of the
// running jobs from the snapshot's ledger, and charges from Running what
// the ledger does not keep (fairshare's run time so far, limits, shared
// resources), in Running's order as account does. False: no ledger, or
// one the cycle cannot use; nothing was charged.
func (c *cycle) fromLedger() bool {
	s := c.s
	l := c.ledger
	if !c.ledgerOK {
		return false
	}
	for _, info := range l.res {
		c.resIdx[info.name] = len(c.resInfo)
		c.resInfo = append(c.resInfo, info)
	}
	if c.inc {
		c.restoreHosts()
	} else {
		for i := range c.hosts {
			c.chargesFrom(&c.hosts[i], &l.hs[i])
		}
	}
	fair := false
	for name, qs := range c.queues {
		fair = fair || qs.q.Fairshare != nil
		lq := l.queues[name]
		if lq == nil {
			continue
		}
		qs.used = lq.used
		for u, n := range lq.users {
			qs.uused[u] = n
		}
		if qs.q.Fairshare != nil {
			for a, n := range lq.accts {
				qs.slots[a] = n
			}
		}
	}
	if !fair && len(c.limits) == 0 && len(s.Shared) == 0 {
		return true
	}
	for i := range s.Running {
		a := &s.Running[i]
		elapsed := c.now.Sub(a.Start)
		total := 0
		for _, ha := range a.Hosts {
			total += ha.Slots
			if len(s.Shared) == 0 {
				continue
			}
			for _, u := range ha.Rusage {
				for _, r := range u.Resources {
					if _, ok := s.Shared[r.Name]; ok {
						c.shared[r.Name] -= amount(ha.Rusage, r.Name, elapsed, ha.Slots, ha.Lead, true)
					}
				}
			}
		}
		if len(c.limits) > 0 {
			v := allocConsumers(a)
			for _, ls := range c.matching(&v) {
				c.charge(ls, &v, a.Hosts, elapsed)
			}
		}
		if qs := c.queues[a.Queue]; qs != nil && qs.q.Fairshare != nil {
			qs.run[fairAccount(a.User, a.Account)] += float64(total) * max(0, elapsed.Hours())
		}
	}
	return true
}

// hostMarks lists hosts in the order they were first marked and counts
// the marks of each, up to 2 (twice or more); 0 is not in the list.
type hostMarks struct {
	list []int
	n    []uint8 // by host
}

// size makes the marks empty, for n hosts.
func (m *hostMarks) size(n int) {
	m.list, m.n = m.list[:0], make([]uint8, n)
}

// mark lists host h the first time and counts the mark.
func (m *hostMarks) mark(h int) {
	switch m.n[h] {
	case 0:
		m.n[h] = 1
		m.list = append(m.list, h)
	case 1:
		m.n[h] = 2
	}
}

// clear forgets every mark.
func (m *hostMarks) clear() {
	for _, h := range m.list {
		m.n[h] = 0
	}
	m.list = m.list[:0]
}
