// Package sim owns the simulator behind `xced simulate`: it replays a
// workload trace (lib/trace) through the scheduler on a virtual clock. The
// decisions are the live controller's own: the effective spec of each job,
// the queues, limits and fairshare come from lib/policy, the placement from
// lib/sched; this package only keeps the clock, the job records and the
// figures of the result. The same input gives the same result, bit for
// bit.
package sim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/policy"
	"xce/lib/resreq"
	"xce/lib/sched"
	"xce/lib/trace"
)

// Epoch is the virtual time of the trace's start (its offset 0). Fixed, so
// that fairshare's decay, which reads the time of day of nothing, and every
// figure are the same on every run.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// bigMem is the memory (MB) of the identical hosts --hosts makes: enough
// for any job.
const bigMem = 1 << 40

// Options configure a run.
type Options struct {
	// Config is the cluster's configuration: queues, limits, fairshare,
	// and the hosts unless Hosts is set. nil: the single-host default's
	// queue "normal" and the hosts of Hosts.
	Config *config.Config
	// Hosts and Slots make Hosts identical hosts of Slots slots each (with
	// memory large enough for any job) instead of the configuration's.
	Hosts, Slots int
	// Cycle, when set, runs the scheduling cycle at this fixed interval
	// instead of at each submission and job end.
	Cycle time.Duration
	// Until stops the virtual clock at this offset from the trace's start
	// (0: when the last job ends); what has not ended by then is counted
	// unfinished.
	Until time.Duration
	// Warn receives warnings (a trace queue or user mapped to the default
	// queue, once per name); nil: dropped.
	Warn func(string)
	// Reservations are advance reservations (brsvadd) over the replay,
	// their times Unix seconds on the simulation's clock (Epoch is the
	// trace's start); the trace's jobs use none, so they keep off the
	// reserved slots (resv.go).
	Reservations []*api.Reservation
	// RsvRequests are reservations to allocate on the run's hosts, as
	// brsvadd allocates them (a reservations file: rsvfile.go); they join
	// Reservations.
	RsvRequests []RsvRequest
	// Claims are standalone claims (bclaim) held, or to allocate, over
	// the whole replay; the trace's jobs use none (claim.go).
	Claims []sched.Claim
	// ClaimRequests are claims of a claims file (claim.go); they join
	// Claims.
	ClaimRequests []ClaimRequest

	// full makes every cycle charge every running job and see every
	// pending one (tests: the same schedule as with the ledger and the
	// pending jobs left out).
	full bool
}

// Outcome says how a job of the trace ended in the simulation.
type Outcome uint8

// Outcomes.
const (
	Done       Outcome = iota // ran to its end
	Killed                    // killed at its run limit (RUNLIMIT or -W)
	Unfinished                // still pending or running at --until
	Skipped                   // never replayed (why in Result.Skips)
)

// JobResult is one job of the trace as the simulation ran it.
type JobResult struct {
	Trace   int32 // index in the trace's Jobs
	Outcome Outcome
	Slots   int32
	Queue   string // effective queue
	Submit  time.Duration
	Start   time.Duration // -1: never started
	End     time.Duration // -1: not ended
	hosts   hostList      // Hosts() (hostlist.go)
}

// Result is a finished run.
type Result struct {
	Trace *trace.Trace
	Jobs  []JobResult // in the trace's order
	// Skips are the trace's jobs that were not replayed, with why (the
	// trace's own skips are in Trace.Skipped).
	Skips []trace.Problem
	// TotalSlots is the cluster's slots; Hosts its host count.
	TotalSlots, Hosts int
	Cycles            int           // scheduling cycles run
	Preemptions       int           // jobs suspended by preemption
	Clock             time.Duration // the virtual time the run ended at
	// Templates are the configuration's templates' instances (supply.go);
	// Hosts and TotalSlots count none of them.
	Templates []*TemplateResult
	// Borrows are the shared resources a provider lends more of
	// (borrow.go).
	Borrows []*BorrowResult
	claims  []sched.Claim // the claims as the run ended (HeldClaims)
}

// pattern is what jobs of one submission shape share: the effective spec
// as the layering made it, and the sched.Job template.
type pattern struct {
	eff    *api.JobSpec
	job    sched.Job // Key and Submit zero
	need   int       // slots the cycle-start limits count
	limits []*api.PendLimit
	// reserves: a cycle tries the job even when its slots are not free
	// (its queue reserves slots, or its requirement is compound).
	reserves bool
}

// patKey is a submission's shape: what the trace gives the layering.
type patKey struct {
	queue, user, group string
	slots              int
	limit              time.Duration
	mem                float64
}

// simJob is a job's state during the run.
type simJob struct {
	pat     *pattern
	submit  int64 // virtual ns from Epoch
	running int   // index in eng.running while running; -1 otherwise
	deps    []int32
	pre     simPre // preemption (preempt.go)
}

// event is a job end in the end heap.
type event struct {
	at  int64
	job int32
}

type endHeap []event

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].job < h[j].job
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// eng is one run's state.
type eng struct {
	opt    Options
	conf   *config.Config
	tr     *trace.Trace
	res    *Result
	jobs   []simJob
	pats   map[patKey]*pattern
	reqs   map[string]*resreq.ResReq
	warned map[string]bool
	local  resreq.Local

	snap    sched.Snapshot
	usage   map[string]map[string]sched.FairUsage // fairshare queues' past use
	running []int32                               // jobs holding an Alloc, parallel to snap.Running
	pending []int32                               // submitted, not started, in submission order

	// pendNeed is the fewest slots a pending job needs (math.MaxInt:
	// none pends), kept as jobs join and leave pending instead of a pass
	// over the backlog each cycle.
	pendNeed int

	ends    endHeap
	subs    []int32 // jobs to submit, by time (a dependent joins when its job ends)
	subAt   []int64 // parallel to subs
	late    subHeap // dependents, submitted when their job has ended
	free    int     // free slots on usable hosts
	hostIdx map[string]int
	names   *hostNames // the jobs' exec hosts' names (hostlist.go)
	byID    map[int64]int32
	sup     *supply  // the templates' instances; nil: none (supply.go)
	elastic int      // slots the templates' instances could add
	lend    *lending // loans of shared resources; nil: none borrows (borrow.go)
}

// subHeap holds dependents waiting for their submission time.
type subHeap []event

func (h subHeap) Len() int { return len(h) }
func (h subHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].job < h[j].job
}
func (h subHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *subHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *subHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Run replays a trace.
func Run(tr *trace.Trace, opt Options) (*Result, error) {
	e := &eng{
		opt: opt, conf: opt.Config, tr: tr,
		pats: map[patKey]*pattern{}, reqs: map[string]*resreq.ResReq{}, warned: map[string]bool{},
		usage: map[string]map[string]sched.FairUsage{}, hostIdx: map[string]int{},
		local: resreq.Local{Type: "X86_64", Model: "sim"}, pendNeed: math.MaxInt,
	}
	if e.conf == nil {
		e.conf = config.Default("sim", 1)
	}
	if err := e.hosts(); err != nil {
		return nil, err
	}
	if err := e.allocRsvs(); err != nil {
		return nil, err
	}
	e.names = newHostNames(e.snap.Hosts)
	e.snap.Schema = e.conf.Schema()
	e.snap.Scratch = &sched.Scratch{}
	e.snap.NoReasons = true
	e.snap.OnlyPlacements = true
	e.snap.HostGroups = policy.HostGroups(e.conf)
	e.snap.UserGroups = policy.UserGroups(e.conf)
	e.snap.Limits = policy.Limits(e.conf)
	e.snap.Shared = policy.Shared(e.conf)
	e.snap.CU = policy.ComputeUnits(e.conf)
	for _, q := range e.conf.QueueNames() {
		if len(e.conf.Queues[q].Fairshare) > 0 {
			e.usage[q] = map[string]sched.FairUsage{}
		}
	}
	// Usage maps are updated in place as jobs end: the queues are built
	// once.
	e.snap.Queues = policy.Queues(e.conf, e.usage)
	e.res = &Result{Trace: tr, Jobs: make([]JobResult, len(tr.Jobs)), Hosts: len(e.snap.Hosts), TotalSlots: e.free}
	e.elastic = e.supplyInit()
	e.borrowInit()
	if e.sup == nil && !opt.full {
		// The hosts stay as they are: the running jobs' charges are
		// kept from one cycle to the next (templates' instances come
		// and go: those runs charge every job each cycle).
		e.snap.Ledger = sched.NewLedger()
	}
	if err := e.prepare(); err != nil {
		return nil, err
	}
	if err := e.claimRequests(); err != nil {
		return nil, err
	}
	e.loop()
	e.names.idx = nil // the names stay for Hosts
	e.res.claims = e.snap.Claims
	return e.res, nil
}

// hosts builds the snapshot's hosts: --hosts' identical ones, or the
// configuration's.
func (e *eng) hosts() error {
	schema := e.conf.Schema()
	add := func(name string, slots int, hc *config.Host) {
		v := schema.NewHost()
		set := func(n string, x any) {
			if i, ok := x.(int64); ok {
				x = float64(i)
			}
			_ = schema.Set(v, n, x) // a resource the schema lacks is not there
		}
		set("mem", float64(bigMem))
		set("maxmem", float64(bigMem))
		set("swp", float64(bigMem))
		set("maxswp", float64(bigMem))
		set("tmp", float64(bigMem))
		set("maxtmp", float64(bigMem))
		set("ncpus", float64(slots))
		set("ut", 0.0)
		set("r15s", 0.0)
		set("r1m", 0.0)
		set("r15m", 0.0)
		set("cpuf", 1.0)
		set("type", e.local.Type)
		set("model", e.local.Model)
		set("hname", name)
		if hc != nil {
			if hc.Type != "" {
				set("type", hc.Type)
			}
			if hc.Model != "" {
				set("model", hc.Model)
			}
			if hc.CPUFactor > 0 {
				set("cpuf", hc.CPUFactor)
			}
			for _, a := range hc.Attributes {
				set(a, true)
			}
			for n, x := range hc.Resources {
				set(n, x)
			}
		}
		e.hostIdx[name] = len(e.snap.Hosts)
		e.snap.Hosts = append(e.snap.Hosts, sched.Host{Name: name, Status: sched.HostOK, MaxSlots: slots, Values: v,
			CPUs: simCores(e.conf, schema, name, v)})
		e.free += slots
	}
	if e.opt.Hosts > 0 {
		slots := max(e.opt.Slots, 1)
		w := len(fmt.Sprint(e.opt.Hosts))
		for i := range e.opt.Hosts {
			add(fmt.Sprintf("h%0*d", w, i+1), slots, nil)
		}
		return nil
	}
	if e.opt.Config == nil {
		return errors.New("no hosts: give --hosts N[xSLOTS] or --config with hosts")
	}
	names := mapsKeys(e.conf.Hosts)
	slices.Sort(names)
	var noSlots []string // hosts simulated with the default slot
	for _, n := range names {
		hc := e.conf.Hosts[n]
		if !hc.IsServer() {
			continue
		}
		slots := hc.Slots
		if slots <= 0 {
			// A live host gets one slot per CPU its worker reports;
			// here there is no worker to ask.
			slots = 1
			noSlots = append(noSlots, n)
		}
		add(n, slots, hc)
	}
	if len(noSlots) > 0 {
		e.warn("noslots", fmt.Sprintf("%s: no slots in the configuration (a live host takes one per CPU its worker reports): simulated with 1 slot and 1 CPU; set slots = N", strings.Join(noSlots, ", ")))
	}
	if len(e.snap.Hosts) == 0 {
		return errors.New("the configuration has no server hosts: give --hosts N[xSLOTS]")
	}
	return nil
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (e *eng) warn(key, msg string) {
	if e.warned[key] {
		return
	}
	e.warned[key] = true
	if e.opt.Warn != nil {
		e.opt.Warn(msg)
	}
}

func (e *eng) skip(i int, why string) {
	tj := &e.tr.Jobs[i]
	e.res.Jobs[i].Outcome = Skipped
	e.res.Skips = append(e.res.Skips, trace.Problem{File: "", Line: tj.Line, Why: fmt.Sprintf("job %d: %s", tj.ID, why)})
}

// prepare lays the configuration over every job (once per shape), skips
// what cannot be replayed and queues the submissions.
func (e *eng) prepare() error {
	n := len(e.tr.Jobs)
	e.jobs = make([]simJob, n)
	e.byID = make(map[int64]int32, n)
	for i := range e.tr.Jobs {
		if _, dup := e.byID[e.tr.Jobs[i].ID]; !dup {
			e.byID[e.tr.Jobs[i].ID] = int32(i)
		}
	}
	e.subs = make([]int32, 0, n)
	e.subAt = make([]int64, 0, n)
	for i := range e.tr.Jobs {
		tj := &e.tr.Jobs[i]
		r := &e.res.Jobs[i]
		*r = JobResult{Trace: int32(i), Slots: int32(tj.Slots), Submit: tj.Submit, Start: -1, End: -1}
		e.jobs[i].running = -1
		if tj.Slots > e.res.TotalSlots+e.elastic {
			e.skip(i, fmt.Sprintf("needs %d slots, the cluster has %d", tj.Slots, e.res.TotalSlots))
			continue
		}
		p, err := e.pattern(tj)
		if err != nil {
			e.skip(i, err.Error())
			continue
		}
		e.jobs[i].pat = p
		r.Queue = p.eff.Queue
		e.jobs[i].submit = int64(tj.Submit)
		if tj.DependsOn > 0 {
			if d, ok := e.byID[tj.DependsOn]; ok && int(d) != i && e.res.Jobs[d].Outcome != Skipped && e.jobs[d].pat != nil {
				// Submitted its think time after the job it depends on
				// ends (done()): SWF's fields 17 and 18.
				e.jobs[d].deps = append(e.jobs[d].deps, int32(i))
				continue
			}
		}
		e.subs = append(e.subs, int32(i))
		e.subAt = append(e.subAt, int64(tj.Submit))
	}
	return nil
}

// pattern returns the effective spec and sched.Job template of a trace
// job's shape: the live controller's layering of the submission it would
// be. A queue or user the configuration refuses falls back to the default
// queue, with a warning once per name.
func (e *eng) pattern(tj *trace.Job) (*pattern, error) {
	k := patKey{queue: tj.Queue, user: tj.User, group: tj.Group, slots: tj.Slots, limit: tj.Limit, mem: tj.MemMB}
	if p, ok := e.pats[k]; ok {
		if p == nil {
			return nil, errors.New("refused by the configuration") // warned once already
		}
		return p, nil
	}
	spec := &api.JobSpec{
		Command: "sim", User: tj.User, Queue: tj.Queue,
		MinTasks: int32(tj.Slots), MaxTasks: int32(tj.Slots),
		RunLimitSec: int64(math.Ceil(tj.Limit.Seconds())),
	}
	if tj.Group != "" && e.conf.UserGroups[tj.Group] != nil {
		spec.UserGroup = tj.Group
	}
	if tj.MemMB > 0 {
		spec.ResReq = []string{fmt.Sprintf("rusage[mem=%.0f/task]", math.Ceil(tj.MemMB))}
	}
	if tj.ResReq != "" {
		spec.ResReq = append(spec.ResReq, tj.ResReq)
	}
	if spec.Queue != "" && e.conf.Queues[spec.Queue] == nil {
		e.warn("queue "+spec.Queue, fmt.Sprintf("queue %s of the trace is not in the configuration: its jobs go to the default queue", spec.Queue))
		spec.Queue = ""
	}
	_, eff, err := policy.Layer(e.conf, spec, false)
	if err != nil && spec.Queue != "" {
		e.warn("user "+tj.User+" "+spec.Queue, fmt.Sprintf("user %s: queue %s refuses the job (%v): its jobs go to the default queue", tj.User, spec.Queue, err))
		spec.Queue = ""
		_, eff, err = policy.Layer(e.conf, spec, false)
	}
	if err != nil {
		e.warn("refused "+tj.User, fmt.Sprintf("user %s: the configuration refuses the job: %v", tj.User, err))
		e.pats[k] = nil
		return nil, fmt.Errorf("refused by the configuration: %w", err)
	}
	req, err := e.parse(strings.Join(eff.ResReq, " "))
	if err != nil {
		e.pats[k] = nil
		return nil, err
	}
	p := &pattern{eff: eff, limits: eff.PendLimits, need: int(max(eff.MinTasks, 1))}
	p.job = policy.Job(e.conf, sched.JobKey{}, eff, req, e.local, eff.Hosts, time.Time{})
	p.reserves = p.job.Req != nil && len(p.job.Req.Compound) > 0
	for i := range e.snap.Queues {
		if q := &e.snap.Queues[i]; q.Name == p.job.Queue && q.SlotReserve {
			p.reserves = true
		}
	}
	e.pats[k] = p
	return p, nil
}

func (e *eng) parse(s string) (*resreq.ResReq, error) {
	if s == "" {
		return nil, nil
	}
	if r, ok := e.reqs[s]; ok {
		return r, nil
	}
	r, err := resreq.Parse(s, resreq.WithSchema(e.conf.Schema()))
	if err != nil {
		return nil, fmt.Errorf("resource requirement %q: %w", s, err)
	}
	e.reqs[s] = r
	return r, nil
}

// at is a virtual offset as the scheduler's time.
func at(ns int64) time.Time { return Epoch.Add(time.Duration(ns)) }

// loop runs the clock: at each instant, the jobs that end then end, those
// submitted then are queued, and a cycle runs (or at each tick of
// Options.Cycle).
func (e *eng) loop() {
	until := int64(math.MaxInt64)
	if e.opt.Until > 0 {
		until = int64(e.opt.Until)
	}
	next := 0 // next of e.subs
	var now int64
	tick := int64(e.opt.Cycle)
	lastTick := -tick
	changed := true // since the last cycle
	for {
		t := int64(math.MaxInt64)
		if next < len(e.subs) {
			t = e.subAt[next]
		}
		if len(e.late) > 0 {
			t = min(t, e.late[0].at)
		}
		if len(e.ends) > 0 {
			t = min(t, e.ends[0].at)
		}
		if e.sup != nil {
			t = min(t, e.supplyNext())
		}
		if e.lend != nil {
			t = min(t, e.borrowNext())
		}
		if b := e.rsvBoundary(now); b < t && (t != math.MaxInt64 || len(e.pending) > 0) {
			t, changed = b, true // a window opens or closes: slots change
		}
		isTick := true
		if tick > 0 {
			nt := lastTick + tick
			if len(e.pending) == 0 || !changed {
				// Nothing changes before the next event (the last cycle
				// placed nothing): skip to the first tick at or after it.
				if t == math.MaxInt64 {
					break
				}
				nt = max(nt, (t+tick-1)/tick*tick)
			}
			isTick = nt <= t
			t = min(t, nt)
		} else if t == math.MaxInt64 {
			break
		}
		if t > until {
			now = until
			break
		}
		now = t
		for len(e.ends) > 0 && e.ends[0].at <= now {
			ev := heap.Pop(&e.ends).(event)
			if !e.current(ev) {
				continue // suspended since (preempt.go)
			}
			e.end(ev.job, ev.at)
			changed = true
		}
		for len(e.late) > 0 && e.late[0].at <= now {
			ev := heap.Pop(&e.late).(event)
			e.submit(ev.job, ev.at)
			changed = true
		}
		for next < len(e.subs) && e.subAt[next] <= now {
			e.submit(e.subs[next], e.subAt[next])
			next++
			changed = true
		}
		if e.sup != nil && e.supplyStep(now) {
			changed = true
		}
		if e.lend != nil && e.borrowGrant(now) {
			changed = true
		}
		if isTick {
			lastTick = now
			changed = e.cycle(now)
		}
		if e.lend != nil {
			e.borrowReturn(now)
		}
	}
	e.res.Clock = time.Duration(now)
	if e.sup != nil {
		e.supplyEnd(now)
	}
	if e.lend != nil {
		e.borrowEnd(now)
	}
	for _, j := range e.pending {
		e.res.Jobs[j].Outcome = Unfinished
	}
	for _, j := range e.running {
		e.res.Jobs[j].Outcome = Unfinished
		e.res.Jobs[j].End = -1
	}
	// Dependents whose job never ended are unfinished too.
	for ; next < len(e.subs); next++ {
		e.res.Jobs[e.subs[next]].Outcome = Unfinished
	}
	for i := range e.jobs {
		r := &e.res.Jobs[i]
		if r.Outcome == Done && r.End < 0 {
			r.Outcome = Unfinished
		}
	}
}

func (e *eng) submit(j int32, t int64) {
	e.jobs[j].submit = t
	e.res.Jobs[j].Submit = time.Duration(t)
	e.pending = append(e.pending, j)
	e.pendNeed = min(e.pendNeed, e.jobs[j].pat.need)
}

// end ends a running job: its slots are free, its use counts in its
// fairshare queue's history (as the controller's fairUsage counts a
// finished job), and its dependents are submitted after their think time.
func (e *eng) end(j int32, t int64) {
	sj := &e.jobs[j]
	i := sj.running
	a := &e.snap.Running[i]
	slots := int(e.res.Jobs[j].Slots) // its hosts' slots, summed by start
	e.free += slots
	if e.sup != nil {
		e.supplyUse(a.Hosts, -1, t)
	}
	if u := e.usage[a.Queue]; u != nil {
		acct := a.Account
		if acct == "" {
			acct = a.User
		}
		// The trace's CPU time, cut in proportion where the job is
		// killed at its run limit sooner than it ran; a trace without
		// one: its run time on each slot, as for a CPU-bound job.
		run := time.Duration(t) - e.res.Jobs[j].Start
		cpu := run * time.Duration(slots)
		if tj := &e.tr.Jobs[j]; tj.CPU > 0 {
			cpu = tj.CPU
			if run < tj.Run {
				cpu = time.Duration(float64(tj.CPU) * float64(run) / float64(tj.Run))
			}
		}
		u[acct] = policy.AddFinished(u[acct], cpu, a.Start, at(t), slots)
	}
	if l := e.snap.Ledger; l != nil {
		l.End(a.Job)
	}
	hosts := a.Hosts
	last := len(e.running) - 1
	if i != last {
		e.snap.Running[i] = e.snap.Running[last]
		e.running[i] = e.running[last]
		e.jobs[e.running[i]].running = i
	}
	e.snap.Running[last] = sched.Alloc{}
	e.snap.Running = e.snap.Running[:last]
	e.snap.Scratch.Recycle(hosts) // the ledger reads them before the next cycle places
	e.running = e.running[:last]
	sj.running = -1
	if e.res.Jobs[j].Outcome == Killed {
		// done() is never met: its dependents never run.
		for _, d := range sj.deps {
			e.res.Jobs[d].Outcome = Skipped
			e.res.Skips = append(e.res.Skips, trace.Problem{Line: e.tr.Jobs[d].Line,
				Why: fmt.Sprintf("job %d: the job it depends on (%d) was killed at its run limit: done() never met", e.tr.Jobs[d].ID, e.tr.Jobs[j].ID)})
			e.orphan(d)
		}
		return
	}
	for _, d := range sj.deps {
		heap.Push(&e.late, event{at: t + int64(e.tr.Jobs[d].Think), job: d})
	}
}

// orphan skips the dependents of a job that never runs.
func (e *eng) orphan(j int32) {
	for _, d := range e.jobs[j].deps {
		e.res.Jobs[d].Outcome = Skipped
		e.res.Skips = append(e.res.Skips, trace.Problem{Line: e.tr.Jobs[d].Line,
			Why: fmt.Sprintf("job %d: the job it depends on (%d) never ran", e.tr.Jobs[d].ID, e.tr.Jobs[j].ID)})
		e.orphan(d)
	}
}

// noPendNeed makes a cycle count the pending jobs' fewest slots afresh
// instead of taking eng.pendNeed (tests: the same schedule either way).
var noPendNeed bool

// cycle is the controller's scheduling cycle at virtual time now: the
// cycle-start limits (lib/policy), then lib/sched on the snapshot.
func (e *eng) cycle(now int64) bool {
	pre := e.preemptOn()
	// With templates a full cluster still has demand to compute, unless
	// every instance exists already.
	elastic := e.sup != nil && !e.sup.full()
	if !pre && (len(e.pending) == 0 || (e.free == 0 && !elastic)) {
		// Nothing can start: a cycle would place nothing.
		return false
	}
	need := e.pendNeed
	if noPendNeed {
		need = math.MaxInt
		for _, j := range e.pending {
			need = min(need, e.jobs[j].pat.need)
		}
	}
	if need > e.free && !pre && !elastic {
		// No pending job fits in the free slots: a cycle would place
		// nothing (reservations are remade by every cycle).
		return false
	}
	e.res.Cycles++
	e.snap.Now = at(now)
	e.snapRsvs(now)
	e.snapClaims()
	var inUse policy.LimitUse
	jobs := e.snap.Jobs[:0]
	// Without preemption or templates, a job needing more slots than
	// are free is not tried (Snapshot.OnlyPlacements) unless its queue
	// reserves slots: it need not be in the snapshot either.
	leave := !pre && e.sup == nil && !e.opt.full
	for _, j := range e.pending {
		sj := &e.jobs[j]
		p := sj.pat
		if len(p.limits) > 0 {
			if inUse == nil {
				inUse = policy.LimitUse{}
				for _, r := range e.running {
					rp := e.jobs[r].pat
					inUse.Take(rp.limits, rp.eff.User, int(e.res.Jobs[r].Slots))
				}
			}
			if inUse.Blocked(p.limits, p.eff.User, p.need) != "" {
				continue
			}
			inUse.Take(p.limits, p.eff.User, p.need)
		}
		if leave && p.need > e.free && !p.reserves {
			continue
		}
		sjob := p.job
		sjob.Key = sched.JobKey{ID: int64(j)}
		sjob.Submit = at(sj.submit)
		jobs = append(jobs, sjob)
	}
	e.snap.Jobs = jobs
	if len(jobs) == 0 && !pre {
		return false
	}
	d := sched.Schedule(&e.snap)
	e.applyClaims(d)
	e.applyPreempt(d, now)
	if e.sup != nil {
		e.demand(d, now)
	}
	if e.lend != nil {
		e.borrow(d, now)
	}
	if len(d.Placements) == 0 {
		return len(d.Resumes) > 0
	}
	for _, pl := range d.Placements {
		e.start(int32(pl.Job.ID), now, pl)
	}
	kept, need := e.pending[:0], math.MaxInt
	for _, j := range e.pending {
		if sj := &e.jobs[j]; sj.running < 0 {
			kept = append(kept, j)
			need = min(need, sj.pat.need)
		}
	}
	e.pending, e.pendNeed = kept, need
	return true
}

// start runs a placed job: it ends at its start plus its run time, or at
// its run limit, where LSF kills it.
func (e *eng) start(j int32, now int64, pl sched.Placement) {
	sj := &e.jobs[j]
	r := &e.res.Jobs[j]
	tj := &e.tr.Jobs[j]
	a := policy.Alloc(e.conf, sched.JobKey{ID: int64(j)}, sj.pat.eff, at(now))
	a.CUExcl = policy.CUExcl(e.conf, sj.pat.job.Req)
	a.Hosts = pl.Hosts
	a.Preempt.Backfill = pl.Backfill
	var slots int
	r.hosts, slots = makeHostList(e.names, pl.Hosts)
	e.free -= slots
	if e.sup != nil {
		e.supplyUse(pl.Hosts, 1, now)
	}
	r.Slots = int32(slots)
	r.Start = time.Duration(now)
	run := tj.Run
	if lim := time.Duration(sj.pat.eff.RunLimitSec) * time.Second; lim > 0 && run > lim {
		run = lim
		r.Outcome = Killed
	}
	r.End = time.Duration(now) + run
	sj.running = len(e.running)
	e.running = append(e.running, j)
	e.snap.Running = append(e.snap.Running, a)
	if l := e.snap.Ledger; l != nil {
		l.Start(&e.snap.Running[len(e.snap.Running)-1])
	}
	heap.Push(&e.ends, event{at: now + int64(run), job: j})
	sj.pre = simPre{endAt: now + int64(run)}
}
