package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"xce/lib/resreq"
)

// The discrete-event simulation of issue #5: a cluster of virtual hosts,
// jobs that arrive, run for their time (never past their run limit) and
// end. The cluster's state changes only when a job arrives or ends, so the
// scheduler runs at each of those instants, and checking the cluster after
// each cycle checks every instant of the simulated run.

// desJob is a job of the simulation.
type desJob struct {
	Job
	runs time.Duration // how long it really runs (<= RunLimit)
	mem  float64       // rusage[mem] (per host, or per slot with task)
	task bool          // rusage[mem=../task]
	frac float64       // what it really uses, as a fraction of its reservation
}

// resOn is the memory the job reserves on a host where it has slots.
func (j *desJob) resOn(slots int) float64 {
	if j.task {
		return j.mem * float64(slots)
	}
	return j.mem
}

type desRun struct {
	j     *desJob
	alloc Alloc
	ends  time.Time
}

// desCluster is the simulated cluster and its workload.
type desCluster struct {
	now      time.Time
	hosts    []Host
	hostMem  map[string]float64 // total memory
	maxSlots map[string]int
	queues   []Queue
	limits   []Limit
	arriving []*desJob // by submission time
	pend     []*desJob // in submission order
	run      []*desRun
	byKey    map[JobKey]*desJob
	done     int
	placed   int
	// cycle statistics
	cycles int
	wall   []time.Duration // time spent in Schedule, per cycle
}

// desOpts sizes the simulation.
type desOpts struct {
	hosts, jobs int
	seed        uint64
}

func newDES(o desOpts) *desCluster {
	r := rand.New(rand.NewPCG(o.seed, 5))
	c := &desCluster{now: t0, hostMem: map[string]float64{}, maxSlots: map[string]int{}, byKey: map[JobKey]*desJob{}}
	mems := []float64{16000, 32000, 64000}
	for i := 0; i < o.hosts; i++ {
		h := Host{Name: fmt.Sprintf("d%04d", i), MaxSlots: 8, Values: testSchema.NewHost()}
		testSchema.Set(h.Values, "type", "X86_64")
		testSchema.Set(h.Values, "r15s", float64(i%7)/10)
		testSchema.Set(h.Values, "pg", 0.0)
		c.hostMem[h.Name] = mems[i%3]
		c.maxSlots[h.Name] = h.MaxSlots
		c.hosts = append(c.hosts, h)
	}
	total := 8 * o.hosts
	c.queues = []Queue{
		// The top queue plans big jobs ahead; everything else may only
		// backfill around its reservations.
		{Name: "prio", Priority: 50, SlotReserve: true},
		{Name: "normal", Priority: 30, SlotLimit: total / 8, UserSlotLimit: total / 40, HostSlotLimit: 6},
		{Name: "fair", Priority: 20, UserSlotLimit: total / 50, Fairshare: &Fairshare{Shares: map[string]int{"u0": 3, "u1": 2, "default": 1}}},
	}
	c.limits = []Limit{
		{Name: "users", Per: PerUser, Queues: []string{"normal", "fair"}, Slots: total / 30},
		{Name: "projq", Per: PerProject, Queues: []string{"normal", "fair"}, Projects: []string{"p1"}, Slots: total / 10, Resources: map[string]float64{"mem": float64(total) * 400}},
		{Name: "perhost", Per: PerHost, Queues: []string{"fair"}, Slots: 3},
		// An lsb.resources JOBS limit on each queue it names.
		{Name: "qjobs", PerQueues: []string{"fair"}, Jobs: max(1, total/100)},
	}
	reqs := map[string]*resreq.ResReq{}
	parse := func(s string) *resreq.ResReq {
		if s == "" {
			return nil
		}
		if reqs[s] == nil {
			reqs[s] = resreq.MustParse(s, resreq.WithSchema(testSchema))
		}
		return reqs[s]
	}
	// Arrivals: a burst that fills the cluster, then a steady stream.
	for i := 0; i < o.jobs; i++ {
		j := &desJob{frac: 0.3 + r.Float64()}
		j.Key = JobKey{ID: int64(i + 1)}
		j.User = fmt.Sprintf("u%d", r.IntN(6))
		j.Project = []string{"p0", "p1"}[r.IntN(2)]
		at := 0
		if i >= o.jobs/3 {
			at = (i - o.jobs/3) * 40 / (o.jobs * 2 / 3) // minutes
		}
		j.Submit = t0.Add(time.Duration(at) * time.Minute)
		j.RunLimit = time.Duration(5+r.IntN(40)) * time.Minute
		j.runs = max(time.Minute, (j.RunLimit * time.Duration(30+r.IntN(71)) / 100).Truncate(time.Minute))
		switch q := r.IntN(10); {
		case q < 2:
			j.Queue, j.Project = "prio", "p0"
			if r.IntN(10) == 0 {
				j.MinSlots = 8 * (o.hosts/20 + r.IntN(o.hosts/8)) // big: waits for slots
			} else {
				j.MinSlots = 1 + r.IntN(8)
				if r.IntN(2) == 0 {
					j.Req = parse("span[hosts=1]")
				}
			}
		case q < 7:
			j.Queue = "normal"
			j.mem = float64(2000 * (1 + r.IntN(4)))
			switch r.IntN(6) {
			case 0:
				j.task = true
				j.mem /= 4
				j.MinSlots = 2 + r.IntN(6)
				j.Req = parse(fmt.Sprintf("rusage[mem=%d/task]", int(j.mem)))
			case 1:
				j.Exclusive = true
				j.Req = parse(fmt.Sprintf("rusage[mem=%d]", int(j.mem)))
			case 2:
				j.MinSlots = 4
				j.Req = parse(fmt.Sprintf("rusage[mem=%d] span[ptile=2]", int(j.mem)))
			default:
				j.MinSlots = 1 + r.IntN(3)
				j.Req = parse(fmt.Sprintf("rusage[mem=%d]", int(j.mem)))
			}
		default:
			j.Queue = "fair"
			j.mem = float64(1000 * (1 + r.IntN(3)))
			j.MinSlots = 1 + r.IntN(2)
			j.Req = parse(fmt.Sprintf("rusage[mem=%d]", int(j.mem)))
		}
		c.arriving = append(c.arriving, j)
	}
	sort.SliceStable(c.arriving, func(a, b int) bool { return c.arriving[a].Submit.Before(c.arriving[b].Submit) })
	return c
}

// snapshot builds what the controller would send: hosts report their
// available memory (total minus what the jobs really use); running jobs
// carry their reservation and reported use.
func (c *desCluster) snapshot() *Snapshot {
	s := &Snapshot{Now: c.now, Schema: testSchema, Queues: c.queues, Limits: c.limits}
	usedMem := map[string]float64{}
	for _, x := range c.run {
		for _, ha := range x.alloc.Hosts {
			usedMem[ha.Host] += ha.Used["mem"]
		}
		s.Running = append(s.Running, x.alloc)
	}
	for _, h := range c.hosts {
		h.Values = &resreq.Host{Num: slices.Clone(h.Values.Num), Str: h.Values.Str, Bool: h.Values.Bool}
		testSchema.Set(h.Values, "mem", c.hostMem[h.Name]-usedMem[h.Name])
		s.Hosts = append(s.Hosts, h)
	}
	for _, j := range c.pend {
		s.Jobs = append(s.Jobs, j.Job)
	}
	return s
}

// advance ends the jobs due and moves to the next instant something
// happens: an arrival or an end. It reports false when nothing is left.
func (c *desCluster) advance() bool {
	next := time.Time{}
	for _, x := range c.run {
		if next.IsZero() || x.ends.Before(next) {
			next = x.ends
		}
	}
	if len(c.arriving) > 0 && (next.IsZero() || c.arriving[0].Submit.Before(next)) {
		next = c.arriving[0].Submit
	}
	if next.IsZero() {
		return false
	}
	if next.After(c.now) {
		c.now = next
	}
	kept := c.run[:0]
	for _, x := range c.run {
		if !x.ends.After(c.now) {
			c.done++
			continue
		}
		kept = append(kept, x)
	}
	c.run = kept
	for len(c.arriving) > 0 && !c.arriving[0].Submit.After(c.now) {
		j := c.arriving[0]
		c.arriving = c.arriving[1:]
		c.pend = append(c.pend, j)
		c.byKey[j.Key] = j
	}
	return true
}

// apply starts the placed jobs and drops them from the pending list.
func (c *desCluster) apply(d *Decision) []*desRun {
	var started []*desRun
	placed := map[JobKey]bool{}
	for _, p := range d.Placements {
		j := c.byKey[p.Job]
		placed[p.Job] = true
		a := Alloc{Job: p.Job, User: j.User, Queue: j.Queue, Project: j.Project, Start: c.now, RunLimit: j.RunLimit, Exclusive: j.Exclusive}
		for _, ha := range p.Hosts {
			if j.mem > 0 {
				ha.Used = map[string]float64{"mem": j.frac * j.resOn(ha.Slots)}
			}
			a.Hosts = append(a.Hosts, ha)
		}
		x := &desRun{j: j, alloc: a, ends: c.now.Add(j.runs)}
		c.run = append(c.run, x)
		started = append(started, x)
	}
	c.placed += len(d.Placements)
	c.pend = slices.DeleteFunc(c.pend, func(j *desJob) bool { return placed[j.Key] })
	return started
}

// desCheckMemQuota: the memory quota check. It found that limitCap counted
// a per-host rusage amount once per job while commit charges it on every
// host (a multi-host job could overrun a memory quota); placements are now
// checked against the whole charge (limitOver).
const desCheckMemQuota = true

var debugDES = false

// desChecker checks every instant of a simulation.
type desChecker struct {
	t        *testing.T
	headKey  JobKey // the first pending job of the reserving queue
	headAt   time.Time
	headFrom time.Time
	// what the checks saw, so that a weak run fails
	reservations, backfilled, memPlacements, headChecks, limitHits int
}

func (k *desChecker) fatalf(c *desCluster, f string, a ...any) {
	k.t.Helper()
	k.t.Fatalf("at +%v: %s", c.now.Sub(t0), fmt.Sprintf(f, a...))
}

// check verifies the decision d made on snapshot s, before and after it
// is applied (started: the jobs it started, already in c.run).
func (k *desChecker) check(c *desCluster, s *Snapshot, d *Decision, started []*desRun) {
	k.t.Helper()
	pendBefore := map[JobKey]*desJob{}
	for i := range s.Jobs {
		pendBefore[s.Jobs[i].Key] = c.byKey[s.Jobs[i].Key]
	}
	// Placements: known pending jobs, their slots, placed once.
	seen := map[JobKey]bool{}
	for _, p := range d.Placements {
		j := pendBefore[p.Job]
		if j == nil || seen[p.Job] {
			k.fatalf(c, "placed %v, not pending or twice", p.Job)
		}
		seen[p.Job] = true
		n := 0
		for _, ha := range p.Hosts {
			n += ha.Slots
		}
		if n != p.Slots || n < max(j.MinSlots, 1) || j.MaxSlots > 0 && n > j.MaxSlots {
			k.fatalf(c, "job %v got %d slots (placement says %d), -n %d,%d", p.Job, n, p.Slots, j.MinSlots, j.MaxSlots)
		}
		if _, ok := d.Pending[p.Job]; ok {
			k.fatalf(c, "job %v placed and pending", p.Job)
		}
	}
	for key := range pendBefore {
		if !seen[key] && len(d.Pending[key]) == 0 {
			k.fatalf(c, "job %v pends without a reason", key)
		}
	}

	// Memory by DESIGN.md's formula: what the host reports minus the
	// unused part of each running reservation, minus what this cycle
	// placed there before, must cover the reservation.
	availMem := map[string]float64{}
	_, memIdx, _ := testSchema.Lookup("mem")
	for _, h := range s.Hosts {
		availMem[h.Name] = h.Values.Num[memIdx]
	}
	for _, a := range s.Running {
		j := c.byKey[a.Job]
		for _, ha := range a.Hosts {
			availMem[ha.Host] -= max(0, j.resOn(ha.Slots)-ha.Used["mem"])
		}
	}
	for _, p := range d.Placements {
		j := c.byKey[p.Job]
		if j.mem == 0 {
			continue
		}
		k.memPlacements++
		for _, ha := range p.Hosts {
			need := j.resOn(ha.Slots)
			if availMem[ha.Host]+1e-6 < need {
				k.fatalf(c, "job %v reserves %v MB on %s, which has %v MB available (%v reported)", p.Job, need, ha.Host, availMem[ha.Host], c.hostMem[ha.Host])
			}
			availMem[ha.Host] -= need
		}
	}

	// Slots and limits, with the jobs started at this instant running.
	type qu struct{ q, u string }
	type qh struct{ q, h string }
	hostSlots, hostJobs, hostExcl := map[string]int{}, map[string]int{}, map[string]bool{}
	qSlots, quSlots, qhSlots := map[string]int{}, map[qu]int{}, map[qh]int{}
	userSlots, projSlots, fairHost := map[string]int{}, map[string]int{}, map[string]int{}
	projMem := map[string]float64{}
	qJobs := map[string]int{}
	newKeys := map[JobKey]bool{}
	for _, x := range started {
		newKeys[x.alloc.Job] = true
	}
	for _, x := range c.run {
		a := &x.alloc
		qJobs[a.Queue]++
		for _, ha := range a.Hosts {
			hostSlots[ha.Host] += ha.Slots
			hostJobs[ha.Host]++
			if a.Exclusive {
				hostExcl[ha.Host] = true
			}
			qSlots[a.Queue] += ha.Slots
			quSlots[qu{a.Queue, a.User}] += ha.Slots
			qhSlots[qh{a.Queue, ha.Host}] += ha.Slots
			if a.Queue != "prio" {
				userSlots[a.User] += ha.Slots
			}
			projSlots[a.Project] += ha.Slots
			if a.Queue == "fair" {
				fairHost[ha.Host] += ha.Slots
			}
			// A quota counts max(reserved, used), the use as the
			// snapshot reported it (none yet for a job just started).
			used := 0.0
			if !newKeys[a.Job] {
				used = ha.Used["mem"]
			}
			projMem[a.Project] += max(x.j.resOn(ha.Slots), used)
		}
	}
	for h, n := range hostSlots {
		if n > c.maxSlots[h] {
			k.fatalf(c, "host %s has %d of %d slots in use", h, n, c.maxSlots[h])
		}
		if hostExcl[h] && hostJobs[h] > 1 {
			k.fatalf(c, "host %s runs an exclusive job and %d others", h, hostJobs[h]-1)
		}
	}
	for _, q := range c.queues {
		if q.SlotLimit > 0 && qSlots[q.Name] > q.SlotLimit {
			k.fatalf(c, "queue %s uses %d slots, QJOB_LIMIT %d", q.Name, qSlots[q.Name], q.SlotLimit)
		}
		if q.SlotLimit > 0 && qSlots[q.Name] == q.SlotLimit {
			k.limitHits++
		}
	}
	for x, n := range quSlots {
		if lim := c.queue(x.q).UserSlotLimit; lim > 0 && n > lim {
			k.fatalf(c, "user %s uses %d slots in queue %s, UJOB_LIMIT %d", x.u, n, x.q, lim)
		} else if n == lim {
			k.limitHits++
		}
	}
	for x, n := range qhSlots {
		if lim := c.queue(x.q).HostSlotLimit; lim > 0 && n > lim {
			k.fatalf(c, "queue %s uses %d slots on %s, HJOB_LIMIT %d", x.q, n, x.h, lim)
		}
	}
	lim := func(name string) *Limit {
		for i := range c.limits {
			if c.limits[i].Name == name {
				return &c.limits[i]
			}
		}
		panic(name)
	}
	for u, n := range userSlots {
		if n > lim("users").Slots {
			k.fatalf(c, "user %s uses %d slots, limit %d", u, n, lim("users").Slots)
		}
	}
	for _, q := range []string{"fair"} {
		if n := qJobs[q]; n > lim("qjobs").Jobs {
			k.fatalf(c, "queue %s runs %d jobs, JOBS limit %d", q, n, lim("qjobs").Jobs)
		}
	}
	pq := lim("projq")
	if projSlots["p1"] > pq.Slots {
		k.fatalf(c, "project p1 uses %d slots, quota %d", projSlots["p1"], pq.Slots)
	}
	// A running job's use may grow past its reservation after it starts,
	// which no scheduler can foresee: the memory quota is checked at the
	// instants the scheduler starts a job of the project.
	p1Started := false
	for _, x := range started {
		p1Started = p1Started || x.j.Project == "p1"
	}
	if desCheckMemQuota && p1Started && projMem["p1"] > pq.Resources["mem"]+1e-6 {
		k.fatalf(c, "project p1 charged %v MB of mem after starting jobs, quota %v", projMem["p1"], pq.Resources["mem"])
	}
	for h, n := range fairHost {
		if n > lim("perhost").Slots {
			k.fatalf(c, "queue fair uses %d slots on %s, per-host limit %d", n, h, lim("perhost").Slots)
		}
	}

	// Reservations: at each one's start, on each of its hosts, the jobs
	// still running by their run limits (those started now included) and
	// the slots held by reservations starting by then fit the host. So
	// no job placed beside a reservation (backfilled) takes its slots.
	k.reservations += len(d.Reservations)
	type hold struct {
		start time.Time
		slots int
	}
	holds := map[string][]hold{}
	for _, r := range d.Reservations {
		if _, ok := d.Pending[r.Job]; !ok {
			k.fatalf(c, "reserved job %v is not pending", r.Job)
		}
		for _, ha := range r.Hosts {
			n := ha.Slots
			if pendBefore[r.Job].Exclusive {
				n = c.maxSlots[ha.Host]
			}
			holds[ha.Host] = append(holds[ha.Host], hold{r.Start, n})
		}
	}
	if len(d.Reservations) > 0 {
		runOn := map[string][]*desRun{}
		for _, x := range c.run {
			for _, ha := range x.alloc.Hosts {
				runOn[ha.Host] = append(runOn[ha.Host], x)
			}
		}
		for h, hs := range holds {
			for _, at := range hs {
				if at.start.IsZero() {
					continue // all jobs have run limits: not expected, not checkable
				}
				n := 0
				for _, x := range runOn[h] {
					if x.alloc.Start.Add(x.alloc.RunLimit).After(at.start) {
						for _, ha := range x.alloc.Hosts {
							if ha.Host == h {
								n += ha.Slots
								if x.alloc.Exclusive {
									n = max(n, c.maxSlots[h])
								}
							}
						}
					}
				}
				for _, o := range hs {
					if !o.start.IsZero() && !o.start.After(at.start) {
						n += o.slots
					}
				}
				if n > c.maxSlots[h] {
					k.fatalf(c, "host %s: %d slots needed at the reservation's start %v, of %d", h, n, at.start.Sub(t0), c.maxSlots[h])
				}
			}
		}
		for _, x := range started {
			if x.j.Queue != "prio" || x.j.Key != k.headKey {
				k.backfilled++
			}
		}
	}

	// The first pending job of the reserving queue (top priority, first
	// come first served, every job with a run limit it never exceeds):
	// its estimated start never moves later, and it starts by then.
	if k.headKey != (JobKey{}) && seen[k.headKey] && c.now.After(k.headAt) {
		k.fatalf(c, "job %v started at +%v, after its estimated start +%v", k.headKey, c.now.Sub(t0), k.headAt.Sub(t0))
	}
	var head *desJob
	for i := range s.Jobs {
		if s.Jobs[i].Queue == "prio" && !seen[s.Jobs[i].Key] {
			head = pendBefore[s.Jobs[i].Key]
			break
		}
	}
	if head == nil {
		k.headKey = JobKey{}
		return
	}
	var res *Reservation
	for i := range d.Reservations {
		if d.Reservations[i].Job == head.Key {
			res = &d.Reservations[i]
		}
	}
	if res == nil || res.Start.IsZero() {
		if debugDES {
			k.t.Logf("+%v head %v n=%d %q", c.now.Sub(t0), head.Key, head.MinSlots, d.Pending[head.Key])
		}
		k.headKey = JobKey{} // nothing planned: nothing to hold it to
		return
	}
	if head.Key == k.headKey {
		k.headChecks++
		if res.Start.After(k.headAt) {
			k.fatalf(c, "job %v: estimated start moved from +%v (planned at +%v) to +%v", head.Key, k.headAt.Sub(t0), k.headFrom.Sub(t0), res.Start.Sub(t0))
		}
	} else {
		k.headFrom = c.now
	}
	k.headKey, k.headAt = head.Key, res.Start
}

func (c *desCluster) queue(name string) *Queue {
	for i := range c.queues {
		if c.queues[i].Name == name {
			return &c.queues[i]
		}
	}
	panic(name)
}

// step runs one instant: the snapshot, the cycle, the jobs started.
func (c *desCluster) step(k *desChecker) {
	s := c.snapshot()
	t := time.Now()
	d := Schedule(s)
	c.wall = append(c.wall, time.Since(t))
	c.cycles++
	started := c.apply(d)
	if k != nil {
		k.check(c, s, d, started)
	}
}

// TestDiscreteEventSimulation runs the simulation on 1,000 virtual hosts
// (-short: 200) and checks every instant: no queue, user, host or project
// limit exceeded, no host over its slots, no job placed on a host whose
// available memory (reported available minus the unused part of each
// reservation) is short of its reservation, and the reserved job's start
// never moved later by the jobs that backfill around it.
func TestDiscreteEventSimulation(t *testing.T) {
	o := desOpts{hosts: 1000, jobs: 2000, seed: 1}
	if testing.Short() {
		o = desOpts{hosts: 200, jobs: 800, seed: 1}
	}
	c := newDES(o)
	k := &desChecker{t: t}
	for c.advance() {
		c.step(k)
		if c.cycles > 5000 {
			t.Fatalf("%d cycles, %d of %d jobs done", c.cycles, c.done, o.jobs)
		}
	}
	if c.done != o.jobs || len(c.pend) > 0 {
		t.Fatalf("%d of %d jobs done, %d pending", c.done, o.jobs, len(c.pend))
	}
	t.Logf("%d jobs on %d hosts in %v simulated, %d instants; %d reservations, head re-planned %d times, %d jobs started beside reservations, %d memory placements checked, queue limit reached at %d instants",
		o.jobs, o.hosts, c.now.Sub(t0), c.cycles, k.reservations, k.headChecks, k.backfilled, k.memPlacements, k.limitHits)
	if k.reservations < 20 || k.headChecks < 10 || k.backfilled < 50 || k.memPlacements < o.jobs/10 || k.limitHits == 0 {
		t.Errorf("a weak simulation: %+v", *k)
	}
}
