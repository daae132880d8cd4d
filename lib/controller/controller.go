// Package controller owns the cluster's live state and the job state
// machine: it answers the API, runs the scheduling cycle (its own checks of
// holds, begin times, dependencies, array and configured limits, then
// lib/sched for placement), and applies every change write ahead: a change
// is in the store before it is acted on, reported, or seen by a query. The
// configuration (lib/config) lays queues, profiles and projects over each
// submission; Reconfig swaps it at run time.
//
// Concurrency: c.mu guards the in-memory state. Job records (*api.Job
// without specs) are immutable once published: a change clones the record,
// writes the clone to the store, then swaps it in. Queries therefore collect
// pointers under the lock and marshal them after releasing it. State changes
// that come from hosts (a job started or ended) and scheduling decisions are
// applied by one loop in batches, so a burst of finishing jobs costs one
// fsync, not one each. Submissions are written outside the lock so that
// concurrent submissions share fsyncs.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/elim"
	"xce/lib/gpu"
	"xce/lib/hostload"
	"xce/lib/resreq"
	"xce/lib/store"
	"xce/lib/worker"
)

// Executor runs jobs on a host; *worker.Worker is the embedded one.
type Executor interface {
	Start(job *api.Job) error
	Reattach(job *api.Job)
	NeverStarted(job *api.Job) bool
	Signal(id int64, idx int32, sig syscall.Signal) error
	// Terminate runs bkill's sequence; reason is what the job report on
	// the host names (TERM_UNKNOWN: none).
	Terminate(id int64, idx int32, reason api.TermReason) error
	Usage(id int64, idx int32) *api.ResourceUsage
	// SetLimits changes a running job's run, memory and CPU limits.
	SetLimits(id int64, idx int32, limits *api.JobSpec) error
	SpoolOutput(id int64, idx int32) string
	Remove(id int64, idx int32)
}

// Config is the controller's fixed configuration.
type Config struct {
	Host     string // the execution host (single-host default)
	Slots    int
	NCPUs    int
	MaxMemKB int64
	// Cluster is the cluster's configuration at start (queues, profiles,
	// projects, limits); nil means config.Default for Host and Slots.
	// Reconfig replaces it: read the one in force with c.config().
	Cluster *config.Config
	// ClusterFile is where Cluster was loaded from ("" = the built-in
	// default); Reconfig reads it again.
	ClusterFile string
	AdminUIDs   []uint32 // besides root and the configured administrators
	StateDir    string
	// ObserveCycle, when set, is told each scheduling cycle's duration
	// (metrics).
	ObserveCycle func(took time.Duration)
	// ObserveCall, when set, is told every call the controller's servers
	// ran (metrics; see ObserveCall).
	ObserveCall func(method string, err error, took time.Duration)
	// MinCycle, when set, is the shortest time between two scheduling
	// cycles. By default there is none: a cycle starts as soon as the one
	// before it has committed its writes, and takes together everything
	// that arrived meanwhile (reports, submissions), so that a burst
	// shares cycles without a fixed pause slowing the pace of short jobs.
	MinCycle time.Duration
	// TerminateInterval is the workers' time between bkill's signals
	// (JOB_TERMINATE_INTERVAL, for bparams); 0 means 10 s.
	TerminateInterval time.Duration
	// Workers: remote workers may join (xced --listen). The configured
	// hosts are then listed (unavail until their worker registers), and a
	// submission is not measured against the hosts connected now.
	Workers bool
	// KillGrace is the workers' time between a run limit's SIGUSR2 and
	// SIGKILL, sent to remote workers.
	KillGrace time.Duration
	// GPUs is the local host's GPU inventory (lib/gpu); nil: none.
	GPUs *gpu.Tracker
	// Alive, if set, is called after every pass of the scheduling loop
	// (Run), at least once a second while the loop turns: xced's systemd
	// watchdog, which a stuck loop then lets expire.
	Alive func()
	// Replication is the candidates of a highly available controller
	// (lib/replica) this controller leads; nil: the only controller.
	Replication Replication
}

// Replication is what the leader of several controller candidates shows
// and does about them.
type Replication interface {
	// Address is this candidate's (HOST:PORT).
	Address() string
	// Candidates are every candidate, with its state.
	Candidates() []*api.Candidate
	// Transfer hands the leadership to another candidate.
	Transfer() error
	// SetCandidates makes the candidates those listed: new ones join,
	// missing ones leave (badmin reconfig).
	SetCandidates(addrs []string) error
}

// Controller is the live cluster.
type Controller struct {
	cfg   Config
	store *store.Store

	mu        sync.Mutex
	jobs      map[key]*rec
	byID      map[int64][]*rec // an array's elements, in index order (elements)
	pending   []*rec           // PEND jobs, in dispatch order when !dirty
	dirty     bool             // pending needs sorting
	queues    map[string]*queue
	hosts     map[string]*host // the execution hosts, by name
	hostNames []string         // their names, sorted
	order     jobOrder         // the job list in bjobs's order (order.go)
	seq       int64            // last change sequence number
	nextID    int64
	ceiling   int64 // ids below it may have been handed out
	lastCycle time.Time
	pre       preemptCycle // this cycle's preemption (preempt.go)
	cycleWhy  string       // why the last cycle left jobs pending
	watchers  map[*watcher]struct{}
	lastSub   map[uint32]int64 // each user's last submitted job id
	// pendStoring: each user's jobs of submissions past the
	// MAX_PEND_JOBS check but not yet in jobs.
	pendStoring map[uint32]int
	reqs        map[string]*resreq.ResReq  // parsed effective requirements
	effs        effSpecs                   // the effective specs, interned
	used        map[key]*api.ResourceUsage // running jobs' last usage samples
	running     map[key]*rec               // the running jobs (running.go)
	// orphanSince: when each pending job's dependency was first found
	// never to be met; orphans the jobs schedule ends (TERM_ORPHAN_SYSTEM),
	// committed with the cycle's dispatches.
	orphanSince map[key]time.Time
	// preExecRetryAt: when each job whose pre-exec failed may be
	// dispatched again (the cluster's preexec_retry_interval after the
	// failure). Kept in memory only: after a restart they may try at once.
	preExecRetryAt map[key]time.Time
	// startRetry: the jobs whose host could not start them (a full disk
	// on it, a launch file it could not write), each with when it may be
	// dispatched again and why, the pending reason until then. In memory
	// only, as preExecRetryAt.
	startRetry map[key]startFailure
	orphans    []store.Change
	hostLoad   *hostload.Sampler
	localElims atomic.Pointer[elim.Runner] // the local host's elims (elim.go)
	// localElimRun is their run, restarted by badmin reconfig.
	localElimRun localElimRun
	// launching counts the launches Run's cycles started: Run returns
	// only once they are done, so the store is not closed under one.
	launching sync.WaitGroup
	// closedHosts: the hosts badmin hclose closed, with the comment of
	// each close (bhosts -l), as stored.
	closedHosts map[string]string
	// supply is the provisioner of hosts on demand (supply.go); nil: none.
	supply Supply
	tokens tokensSeen // the loans the last snapshot read (borrow.go)
	// drainedHosts and decommissioned: badmin hdrain and hdecommission
	// (drain.go).
	drainedHosts, decommissioned map[string]bool
	rsvs                         map[string]*api.Reservation // advance reservations by ID (resv.go)
	jgroups                      jobGroups                   // explicit job groups (jobgroup.go)
	claims                       claimState                  // standalone claims (claim.go)
	// stale: instances a returning worker still ran of jobs that are no
	// longer its own (rerun elsewhere, or ended), by host, until their end
	// is reported: the job is not placed there meanwhile, and that end
	// is not the job's.
	stale map[string]map[key]bool
	// staleCores: the cores those instances hold, withheld from new jobs
	// until then (containment.go).
	staleCores map[string]map[key][]int
	// execs: the connected hosts' executors, read without c.mu (execOf).
	// (a sync.Map: hosts come and go one at a time, and a copy of the
	// whole map at each of 10,000 registrations was O(N²)).
	execs sync.Map // host name → Executor
	// kills: terminations asked for while a job's host was away (killMu).
	killMu sync.Mutex
	kills  map[string]map[key]bool
	// conf is the configuration in force: read without c.mu (submissions
	// layer against it), swapped by Reconfig.
	conf atomic.Pointer[config.Config]
	// tasks: where blaunch's tasks on other hosts report (tasks.go).
	tasks taskRoutes
	term  termRoutes // interactive jobs' relayed terminals (term.go)

	// stats: jobs by state, queue and user, and totals (stats.go).
	stats jobStats
	// perf: badmin perfmon's sampling (perfmon.go).
	perf perfMonitor
	// streams: ended by EndStreams (endstreams.go).
	streams endableStreams

	repMu   sync.Mutex
	reports []pendingReport
	kick    chan struct{}
	started time.Time
}

type key struct {
	id  int64
	idx int32
}

// rec is one job in memory.
type rec struct {
	job *api.Job // immutable; replaced on change
	eff *effSpec // effective spec, shared by an array's elements
	// The spec as submitted stays in the store: it is read when a job is
	// launched or shown in full, and two copies of every pending job's
	// spec would double the controller's memory.
	why string // pending reason from the last cycle that looked
	// queued: the job is in Controller.pending (which drops jobs that are
	// no longer pending lazily, in schedule).
	queued bool
	// self holds the record itself when it is a plain job's (index 0):
	// elements returns it as the job's one element, so that byID holds
	// arrays only (a map entry less a job, in what the record's size
	// class has room for anyway).
	self [1]*rec
}

// elements returns a job's records in index order: an array's elements,
// or a plain job's one record; nil when the job is not known (c.mu held).
// The slice is the index's own: it is not to be changed.
func (c *Controller) elements(id int64) []*rec {
	if els, ok := c.byID[id]; ok {
		return els
	}
	if r := c.jobs[key{id, 0}]; r != nil {
		return r.self[:]
	}
	return nil
}

type queue struct {
	q *api.Queue
}

// pendingReport is a worker's report waiting for the loop, and what to do
// once it is stored (a remote worker's acknowledgement).
type pendingReport struct {
	rep  worker.Report
	done func()
}

// idBlock is how many job ids are reserved with one durable write.
const idBlock = 1000

// New restores the controller's state from the store and reattaches the
// jobs that were running. ex is the embedded worker of cfg.Host; nil when
// this host runs no jobs (remote workers only).
func New(cfg Config, st *store.Store, ex Executor) (*Controller, error) {
	if cfg.Cluster == nil {
		cfg.Cluster = config.Default(cfg.Host, cfg.Slots)
	}
	c := &Controller{
		cfg:      cfg,
		store:    st,
		hosts:    map[string]*host{},
		jobs:     map[key]*rec{},
		byID:     map[int64][]*rec{},
		queues:   map[string]*queue{},
		watchers: map[*watcher]struct{}{},
		lastSub:  map[uint32]int64{},
		streams:  newEndableStreams(),

		pendStoring: map[uint32]int{},
		reqs:        map[string]*resreq.ResReq{},
		used:        map[key]*api.ResourceUsage{},
		kick:        make(chan struct{}, 1),
		started:     time.Now(),
		hostLoad:    hostload.New(hostload.Paths{}),
	}
	c.conf.Store(cfg.Cluster)
	if ex != nil {
		h := c.hostNamed(cfg.Host)
		h.local, h.slots, h.lostAt = true, cfg.Slots, time.Time{}
		c.setExec(h, ex)
	}
	c.configuredHosts(cfg.Cluster)
	for _, q := range cfg.Cluster.APIQueues() {
		c.queues[q.Name] = &queue{q: q}
	}
	if err := c.restoreDrains(); err != nil {
		return nil, err
	}
	if err := c.restoreControls(); err != nil {
		return nil, err
	}
	if err := c.restoreRsvs(); err != nil {
		return nil, err
	}
	if err := c.restoreJobGroups(); err != nil {
		return nil, err
	}
	if err := c.restoreClaims(); err != nil {
		return nil, err
	}
	if err := c.restore(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) restore() error {
	defer collectLess()()
	l, err := c.store.Load()
	if err != nil {
		return err
	}
	ceiling, err := c.store.IDCeiling()
	if err != nil {
		return err
	}
	c.nextID = max(ceiling, 1)
	if len(c.jobs) == 0 { // sized once for what is restored
		c.jobs = make(map[key]*rec, len(l.Jobs))
	}
	var rerun []*rec
	effs := map[int64]*effSpec{}
	for _, j := range l.Jobs {
		eff := effs[j.JobId]
		if eff == nil {
			if eff, err = c.effs.decode(l.Effective[j.JobId]); err != nil {
				return fmt.Errorf("job %d: decode effective spec: %w", j.JobId, err)
			}
			effs[j.JobId] = eff
		}
		r := &rec{job: j, eff: eff}
		c.insert(r)
		c.nextID = max(c.nextID, j.JobId+1)
		c.seq = max(c.seq, j.Seq)
		uid := r.eff.GetUid()
		c.lastSub[uid] = max(c.lastSub[uid], j.JobId)
		if isRunning(j.State) {
			c.takeSlots(j, r.eff.GetExclusive(), 1)
			rerun = append(rerun, r)
		}
	}
	// Reserve a fresh block: ids handed out before a crash are never reused.
	c.ceiling = c.nextID + idBlock
	if err := c.store.SetIDCeiling(c.ceiling); err != nil {
		return err
	}
	var back []store.Change
	remote := 0
	for _, r := range rerun {
		h := c.hosts[firstHost(r.job)]
		if h == nil || !h.local {
			// A remote worker's: adopted when the worker registers.
			remote++
			continue
		}
		if h.exec.NeverStarted(r.job) {
			// Dispatched but never started: dispatch it again.
			nj := c.clone(r)
			nj.State = api.JobState_PEND
			nj.StartTime, nj.ExecHosts, nj.AllocSlots = 0, nil, 0
			back = append(back, store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, "", "the controller restarted before the job started")})
			continue
		}
		h.exec.Reattach(r.job)
		c.rejoinLimits(h.exec, r) // rsvend.go
	}
	if err := c.commit(back); err != nil {
		return err
	}
	if len(l.Jobs) > 0 {
		slog.Info("restored jobs", "jobs", len(l.Jobs), "running", len(rerun)-len(back), "on_remote_hosts", remote, "next_id", c.nextID)
	}
	return nil
}

// collectLess makes the collector run less often until the function it
// returns is called: what a restore allocates is nearly all records it
// keeps, so a collection while it builds them frees little and marks
// what it built so far, again and again (xced collects at +50%). The
// setting is the process's: overlapping calls (tests' controllers) share
// one raise.
func collectLess() (restore func()) {
	gcLess.Lock()
	defer gcLess.Unlock()
	if gcLess.depth == 0 {
		gcLess.prev = debug.SetGCPercent(400)
		if gcLess.prev < 0 || gcLess.prev > 400 {
			debug.SetGCPercent(gcLess.prev) // off, or rarer already
		}
	}
	gcLess.depth++
	return func() {
		gcLess.Lock()
		defer gcLess.Unlock()
		if gcLess.depth--; gcLess.depth == 0 {
			debug.SetGCPercent(gcLess.prev)
		}
	}
}

var gcLess struct {
	sync.Mutex
	depth, prev int
}

// config is the configuration in force.
func (c *Controller) config() *config.Config { return c.conf.Load() }

// Close records the exact next job id, so that after a clean stop job
// ids continue without the gap a crash leaves.
func (c *Controller) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ceiling = c.nextID
	return c.store.SetIDCeiling(c.nextID)
}

// insert adds a record to the indexes (c.mu held or not yet shared).
func (c *Controller) insert(r *rec) {
	k := key{r.job.JobId, r.job.ArrayIndex}
	c.jobs[k] = r
	c.stats.count(r.job, r.eff, 1)
	c.trackRunning(r, false)
	if k.idx == 0 {
		r.self[0] = r // a plain job: no entry in byID
	} else {
		els := c.byID[k.id]
		i := sort.Search(len(els), func(i int) bool { return els[i].job.ArrayIndex >= k.idx })
		els = append(els, nil)
		copy(els[i+1:], els[i:])
		els[i] = r
		c.byID[k.id] = els
	}
	if r.job.State == api.JobState_PEND {
		c.pending = append(c.pending, r)
		r.queued = true
		c.dirty = true
	}
	c.ordered(r)
}

// clone returns a private copy of a job's record to change.
func (c *Controller) clone(r *rec) *api.Job { return c.cloneJob(r.job) }

func (c *Controller) cloneJob(j *api.Job) *api.Job {
	nj := proto.Clone(j).(*api.Job)
	c.seq++
	nj.Seq = c.seq
	return nj
}

func (c *Controller) event(j *api.Job, t api.EventType, user, detail string) *api.Event {
	return &api.Event{
		JobId:      j.JobId,
		ArrayIndex: j.ArrayIndex,
		Time:       time.Now().UnixNano(),
		Type:       t,
		State:      j.State,
		User:       user,
		Detail:     detail,
	}
}

// commit writes changes, then publishes them (c.mu held). On a failed write
// nothing changes in memory.
func (c *Controller) commit(changes []store.Change) error {
	if len(changes) == 0 {
		return nil
	}
	c.acctRequeued(changes)
	if err := c.store.Apply(changes); err != nil {
		return err
	}
	c.applied(changes, true)
	return nil
}

// applied makes stored changes the records in memory (c.mu held), and
// tells the watchers when publish is set.
func (c *Controller) applied(changes []store.Change, publish bool) {
	for _, ch := range changes {
		if ch.EffectiveRaw != nil {
			// A new effective spec for the job (and its array siblings).
			if eff, err := c.effs.decode(ch.EffectiveRaw); err == nil {
				for _, r := range c.elements(ch.Job.JobId) {
					c.stats.count(r.job, r.eff, -1)
					r.eff = eff
					c.stats.count(r.job, r.eff, 1)
				}
			}
		}
	}
	for _, ch := range changes {
		r := c.jobs[key{ch.Job.JobId, ch.Job.ArrayIndex}]
		old := r.job
		was := old.State
		r.job = ch.Job
		c.trackRunning(r, isRunning(was))
		c.stats.changed(old, ch.Job, r.eff)
		r.why = ""
		if ch.Event != nil && ch.Event.Type == api.EventType_PEND_AGAIN {
			r.why = ch.Event.Detail
		}
		if ch.Job.State == api.JobState_PEND && was != api.JobState_PEND {
			// A job dispatched (or held) and back to pending before the
			// list dropped it is in it still: listing it twice would
			// dispatch it twice.
			if !r.queued {
				c.pending = append(c.pending, r)
				r.queued = true
			}
			c.dirty = true
		}
		if isRunning(was) && !isRunning(ch.Job.State) {
			c.takeSlots(old, r.eff.GetExclusive(), -1)
		}
		if publish {
			c.publish(r)
		}
	}
}

func isRunning(s api.JobState) bool {
	switch s {
	case api.JobState_RUN, api.JobState_USUSP, api.JobState_SSUSP, api.JobState_UNKWN:
		return true
	}
	return false
}

func isFinished(s api.JobState) bool {
	return s == api.JobState_DONE || s == api.JobState_EXIT
}

// Report receives what the embedded worker says about a job.
func (c *Controller) Report(r worker.Report) { c.reportThen(r, nil) }

// reportThen queues a report; done, when set, runs once the loop has
// stored it (or found nothing to store).
func (c *Controller) reportThen(r worker.Report, done func()) {
	if r.Host == "" {
		r.Host = c.cfg.Host
	}
	c.repMu.Lock()
	c.reports = append(c.reports, pendingReport{r, done})
	c.repMu.Unlock()
	c.Kick()
}

// reasonRequeuedExit is the event text of a job requeued by its exit code.
const reasonRequeuedExit = "Job has been requeued by its requeue exit values"

// requeueOnExit reports whether a job that ended as ev goes back to
// pending by its requeue exit values: the job's own exit code is in them,
// and neither a kill (bkill, which LSF does not requeue) nor a limit ended
// it.
func requeueOnExit(eff *effSpec, cur *api.Job, ev *api.Event) bool {
	if eff == nil || eff.effExtra == nil || eff.requeue == nil || ev.ExitStatus == 0 || ev.TermReason != api.TermReason_TERM_UNKNOWN {
		return false
	}
	if cur.TermReasonSet || cur.KillReason != "" || killedAsDone(cur) {
		return false
	}
	return eff.requeue.Requeues(int(ev.ExitStatus))
}

// Kick asks for a scheduling cycle soon.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run applies reports and schedules until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer c.launching.Wait()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// Finished jobs are forgotten within a fraction of the clean period
	// (at most a minute late).
	period := time.Duration(c.config().Cluster.CleanPeriod) * time.Second
	clean := time.NewTicker(min(time.Minute, max(time.Second, period/4)))
	defer clean.Stop()
	usage := time.NewTicker(5 * time.Second)
	defer usage.Stop()
	// Accounting records past the retention are pruned at start and then
	// every hour (more often for a retention under 4 hours).
	retention := time.Duration(c.config().Cluster.AcctRetention) * time.Second
	prune := time.NewTicker(min(time.Hour, max(time.Second, retention/4)))
	defer prune.Stop()
	c.pruneAcct(time.Now())
	load := time.NewTicker(loadInterval)
	defer load.Stop()
	c.sampleLoad()
	c.startLocalElims(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-tick.C:
			// The averaged load indices follow the host as often as
			// they are sampled.
			c.hostLoad.Latest(time.Now(), time.Second)
			c.checkHosts(time.Now())
			c.expireRsvs(time.Now())
			c.expireClaims(time.Now())
			c.perf.mon.Tick(time.Now(), c.perfTotals())
		case <-clean.C:
			c.clean()
		case <-prune.C:
			c.pruneAcct(time.Now())
		case <-usage.C:
			c.refreshUsage()
		case <-load.C:
			c.sampleLoad()
		}
		subs := c.stats.submitted.Load()
		began := time.Now()
		c.cycle()
		if c.cfg.Alive != nil {
			c.cfg.Alive()
		}
		// What arrived while the cycle ran has kicked again (the kick
		// holds one), and the next cycle takes it all at once: no pause,
		// unless submissions are flowing (pace.go).
		if pause := c.pause(subs, time.Since(began)); pause > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
		}
	}
}

func (c *Controller) cycle() {
	c.repMu.Lock()
	reports := c.reports
	c.reports = nil
	c.repMu.Unlock()

	c.mu.Lock()
	var changes []store.Change
	// Several reports about one job may share a batch; each must see the
	// change the one before it made.
	staged := map[key]*api.Job{}
	for _, pr := range reports {
		if ch, ok := c.applyReport(pr.rep, staged); ok {
			changes = append(changes, ch)
			staged[key{ch.Job.JobId, ch.Job.ArrayIndex}] = ch.Job
		}
	}
	// The reports apply first, in memory: they free the slots the
	// placement uses. They are stored with the cycle's dispatches, in one
	// synced write (cyclecommit.go).
	more, gangActs := c.gangFailures(changes) // gang.go
	changes = append(changes, more...)
	c.acctRequeued(changes)
	undo := c.applyAhead(changes)
	began := time.Now()
	starts := c.schedule()
	if f := c.cfg.ObserveCycle; f != nil {
		f(time.Since(began))
	}
	dispatch := c.orphans
	c.orphans = nil
	pre := c.takePreempt() // victims first: written with their preemptors
	dispatch = append(dispatch, pre.changes...)
	for _, nj := range starts {
		dispatch = append(dispatch, store.Change{Job: nj, Event: c.startEvent(nj)})
	}
	if err := c.commitWith(changes, dispatch); err != nil {
		// Nothing was dispatched; the slots taken in schedule are freed,
		// and the reports are undone in memory and tried again.
		for _, nj := range starts {
			c.takeSlots(nj, c.jobs[key{nj.JobId, nj.ArrayIndex}].eff.GetExclusive(), -1)
		}
		undo()
		c.mu.Unlock()
		slog.Error("record job reports and dispatches; retrying", "err", err)
		c.repMu.Lock()
		c.reports = append(reports, c.reports...)
		c.repMu.Unlock()
		time.Sleep(time.Second)
		c.Kick()
		return
	}
	for _, pr := range reports {
		if pr.done != nil {
			pr.done()
		}
	}
	type launch struct {
		job *api.Job
		ex  Executor
	}
	launches := make([]launch, 0, len(starts))
	for _, nj := range starts {
		r := c.jobs[key{nj.JobId, nj.ArrayIndex}]
		full := proto.Clone(nj).(*api.Job)
		eff, err := r.eff.Spec()
		if err != nil {
			slog.Error("decode effective spec", "job", nj.JobId, "err", err)
		}
		full.Effective = eff
		c.rsvLaunch(full)
		launches = append(launches, launch{full, c.execOf(nj)})
	}
	c.mu.Unlock()

	pre.send()
	sendGangActs(gangActs)
	for _, l := range launches {
		c.launching.Add(1)
		go func() {
			defer c.launching.Done()
			c.launch(l.job, l.ex)
		}()
	}
}

func (c *Controller) startEvent(nj *api.Job) *api.Event {
	ev := c.event(nj, api.EventType_START, "", "")
	ev.Hosts = nj.ExecHosts
	return ev
}

func (c *Controller) launch(j *api.Job, ex Executor) {
	spec, _, err := c.store.Spec(j.JobId)
	if err == nil {
		scrubLaunch(spec)
		j.Spec = spec
		spec.Env, err = c.store.Env(spec.EnvRef)
	}
	if err == nil {
		relayTerm(j, ex)
		err = ex.Start(j)
	}
	switch {
	case errors.Is(err, errAbsent):
		// The host's worker went between the decision and the launch.
		c.Report(worker.Report{JobID: j.JobId, Index: j.ArrayIndex, Host: firstHost(j), NeverStarted: true})
	case err != nil:
		slog.Error("start job", "job", j.JobId, "index", j.ArrayIndex, "err", err)
		c.Report(worker.Report{JobID: j.JobId, Index: j.ArrayIndex, Host: firstHost(j), Err: err})
	}
}

// applyReport turns a worker report into a change (c.mu held).
func (c *Controller) applyReport(rep worker.Report, staged map[key]*api.Job) (store.Change, bool) {
	k := key{rep.JobID, rep.Index}
	r := c.jobs[k]
	if r == nil {
		return store.Change{}, false
	}
	cur := r.job
	if s := staged[k]; s != nil {
		cur = s
	}
	if st := c.stale[rep.Host]; st[k] {
		if rep.Finished != nil || rep.NeverStarted || rep.Err != nil {
			delete(st, k)
			c.setStale(rep.Host, st)
			c.Kick() // the host may take the job again
		}
		return store.Change{}, false
	}
	if !isRunning(cur.State) {
		return store.Change{}, false
	}
	if rep.Host != "" && firstHost(cur) != "" && rep.Host != firstHost(cur) {
		// An instance on a host the job no longer runs on (it was rerun
		// elsewhere after that host failed): it is being terminated.
		return store.Change{}, false
	}
	nj := c.cloneJob(cur)
	if cur.State == api.JobState_UNKWN {
		nj.State = cur.PrevState
		if !isRunning(nj.State) {
			nj.State = api.JobState_RUN
		}
	}
	if rep.Finished != nil {
		c.checkEnd(cur, rep.Finished)
	}
	switch {
	case rep.NeverStarted:
		// Dispatched, but the host never started it: dispatch it again.
		nj.State = api.JobState_PEND
		nj.StartTime, nj.ExecHosts, nj.AllocSlots, nj.Pid, nj.ShepherdPid = 0, nil, 0, 0, 0
		return store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, "", "the job's host did not start it; it is dispatched again")}, true
	case rep.Err != nil:
		// The host could not start it (its disk is full, say): the job
		// never ran, so it pends with the reason and is dispatched again
		// after startRetryInterval, rather than ending for a host's
		// trouble.
		nj.State = api.JobState_PEND
		nj.StartTime, nj.ExecHosts, nj.AllocSlots, nj.Pid, nj.ShepherdPid = 0, nil, 0, 0, 0
		why := fmt.Sprintf("%s (%s: %v)", reasonStartFailed, rep.Host, rep.Err)
		if c.startRetry == nil {
			c.startRetry = map[key]startFailure{}
		}
		c.startRetry[k] = startFailure{at: time.Now().Add(startRetryInterval), why: why}
		return store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, "", why+"; it is dispatched again")}, true
	case rep.Started != nil && cur.Pid != 0 && cur.Pid == rep.Started.Pid:
		// Sent again after a reconnect: recorded already.
		return store.Change{}, false
	case rep.Started != nil:
		ev := rep.Started
		nj.Pid = ev.Pid
		nj.ExecHome, nj.ExecCwd = ev.ExecHome, ev.ExecCwd
		if sp := rep.ShepherdPid; sp != 0 {
			nj.ShepherdPid = int32(sp)
		} else if sp := c.shepherdPid(rep); sp != 0 {
			nj.ShepherdPid = int32(sp)
		}
		e := c.event(nj, api.EventType_START, "", "running")
		e.Pid, e.ExecHome, e.ExecCwd = ev.Pid, ev.ExecHome, ev.ExecCwd
		return store.Change{Job: nj, Event: e}, true
	case rep.Finished != nil && rep.Finished.Type == api.EventType_PEND_AGAIN:
		// The pre-exec failed (an exit code other than 99): back to
		// pending, dispatched again after the retry interval, until the
		// cluster's local_max_preexec_retry; then suspended (PSUSP) or
		// ended, as local_max_preexec_retry_action says.
		cl := &c.config().Cluster
		nj.PreExecFailures++
		nj.StartTime, nj.ExecHosts, nj.AllocSlots, nj.Pid, nj.ShepherdPid = 0, nil, 0, 0, 0
		if lim := cl.LocalMaxPreexecRetry; lim > 0 && int(nj.PreExecFailures) >= lim {
			detail := fmt.Sprintf("%s; %s (%d)", rep.Finished.Detail, reasonPreExecLimit, lim)
			if cl.LocalMaxPreexecRetryAction == "exit" {
				nj.State = api.JobState_EXIT
				nj.EndTime = rep.Finished.Time
				nj.ExitStatus = rep.Finished.ExitStatus
				nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_OTHER, true
				return store.Change{Job: nj, Event: c.event(nj, api.EventType_FINISH, "", detail)}, true
			}
			nj.State, nj.HeldByAdmin = api.JobState_PSUSP, false
			return store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, "", detail)}, true
		}
		nj.State = api.JobState_PEND
		if c.preExecRetryAt == nil {
			c.preExecRetryAt = map[key]time.Time{}
		}
		c.preExecRetryAt[k] = time.Now().Add(time.Duration(cl.PreexecRetryInterval) * time.Second)
		return store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, "", rep.Finished.Detail)}, true
	case rep.Finished != nil && cur.RequeuePending:
		// brequeue of a running job: back to pending, not finished.
		hold := cur.RequeueHold
		requeued(nj, hold)
		e := c.event(nj, api.EventType_PEND_AGAIN, "", fmt.Sprintf("%s;(exit code %d)", reasonRequeued, rep.Finished.ExitStatus))
		e.ExitStatus = rep.Finished.ExitStatus
		return store.Change{Job: nj, Event: e}, true
	case rep.Finished != nil && requeueOnExit(r.eff, cur, rep.Finished):
		// An exit code of the job's requeue exit values (-Q, the profile's
		// or the queue's REQUEUE_EXIT_VALUES): back to pending.
		requeued(nj, false)
		e := c.event(nj, api.EventType_PEND_AGAIN, "", fmt.Sprintf("%s;(exit code %d)", reasonRequeuedExit, rep.Finished.ExitStatus))
		e.ExitStatus = rep.Finished.ExitStatus
		return store.Change{Job: nj, Event: e}, true
	case rep.Finished != nil:
		ev := rep.Finished
		nj.State = ev.State
		if nj.State != api.JobState_DONE {
			nj.State = api.JobState_EXIT
		}
		nj.EndTime = ev.Time
		nj.ExitStatus = ev.ExitStatus
		if ev.Usage != nil {
			nj.Usage = ev.Usage
		}
		if nj.Usage == nil {
			nj.Usage = &api.ResourceUsage{}
		}
		nj.Usage.CpuTimeMs = ev.CpuTimeMs
		if ev.ExecCwd != "" {
			nj.ExecHome, nj.ExecCwd = ev.ExecHome, ev.ExecCwd
		}
		switch {
		case ev.TermReason != api.TermReason_TERM_UNKNOWN:
			nj.TermReason, nj.TermReasonSet = ev.TermReason, true
		case nj.TermReasonSet && nj.State == api.JobState_EXIT:
			// bkill asked for this end: keep TERM_OWNER / TERM_ADMIN.
		case ev.Signal != 0 && nj.State == api.JobState_EXIT:
			nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_EXTERNAL_SIGNAL, true
		default:
			nj.TermReasonSet = false
		}
		if killedAsDone(cur) {
			nj.State, nj.ExitStatus = api.JobState_DONE, 0
			nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_UNKNOWN, false
		}
		switch {
		case strings.Contains(ev.Detail, "POST_ERR"):
			nj.PostExec = "POST_ERR"
		case strings.Contains(ev.Detail, "POST_DONE"):
			nj.PostExec = "POST_DONE"
		case ev.TermReason == api.TermReason_TERM_CTRL_PID && hasPostExec(r.eff):
			// The shepherd died (a job can kill its own) before it ran
			// the post-exec: post_done() must not count it as done.
			nj.PostExec = "POST_ERR"
		}
		e := c.event(nj, api.EventType_FINISH, "", ev.Detail)
		if ev.Time > 0 { // when the job ended, not when the report came (after a restart)
			e.Time = ev.Time
		}
		e.ExitStatus, e.TermReason, e.CpuTimeMs, e.Signal = nj.ExitStatus, nj.TermReason, ev.CpuTimeMs, ev.Signal
		e.Usage = nj.Usage
		return store.Change{Job: nj, Event: e}, true
	}
	return store.Change{}, false
}

func (c *Controller) shepherdPid(rep worker.Report) int {
	h := c.hosts[rep.Host]
	if h == nil {
		return 0
	}
	if w, ok := h.exec.(interface{ ShepherdPid(int64, int32) int }); ok {
		return w.ShepherdPid(rep.JobID, rep.Index)
	}
	return 0
}

// refreshUsage reads the running jobs' latest usage samples, for the
// scheduler's accounting (a job is charged max(reserved, used)). The files
// are read without the lock.
func (c *Controller) refreshUsage() {
	type on struct {
		k  key
		ex Executor
	}
	c.mu.Lock()
	var keys []on
	for k, r := range c.running {
		keys = append(keys, on{k, c.execOf(r.job)})
	}
	c.mu.Unlock()
	used := make(map[key]*api.ResourceUsage, len(keys))
	for _, o := range keys {
		if u := o.ex.Usage(o.k.id, o.k.idx); u != nil {
			used[o.k] = u
		}
	}
	c.mu.Lock()
	for k, u := range used {
		if r := c.jobs[k]; r != nil {
			used[k] = c.checkUsage(r.job, u)
		}
	}
	c.used = used
	c.mu.Unlock()
}

// clean forgets finished jobs older than the clean period, once their
// accounting records are stored: those are written here, a batch per
// call, rather than with each job's end, so that the finish path writes
// no more than it did. A job that changed meanwhile (brequeue) stays.
func (c *Controller) clean() {
	cutoff := time.Now().Add(-time.Duration(c.config().Cluster.CleanPeriod) * time.Second).UnixNano()
	c.mu.Lock()
	var old []*api.Job
	for _, r := range c.jobs {
		if isFinished(r.job.State) && r.job.EndTime < cutoff {
			old = append(old, r.job)
		}
	}
	recs := c.finishedRecords(old)
	c.mu.Unlock()
	if len(old) == 0 {
		return
	}
	if err := c.accountMissing(recs); err != nil {
		// They stay, in memory and in the store, until it works.
		slog.Error("forget finished jobs", "err", err)
		return
	}
	c.mu.Lock()
	gone := old[:0]
	var execs []Executor
	for _, j := range old {
		k := key{j.JobId, j.ArrayIndex}
		r := c.jobs[k]
		if r == nil || r.job != j {
			continue
		}
		gone = append(gone, j)
		execs = append(execs, c.execOf(j))
		delete(c.jobs, k)
		c.stats.count(j, r.eff, -1)
		c.unordered(j)
		delete(c.preExecRetryAt, k)
		delete(c.startRetry, k)
		delete(c.orphanSince, k)
		if j.ArrayIndex == 0 {
			continue // a plain job has no entry in byID
		}
		els := c.byID[j.JobId]
		out := els[:0]
		for _, r := range els {
			if r.job.ArrayIndex != j.ArrayIndex {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			delete(c.byID, j.JobId)
		} else {
			c.byID[j.JobId] = out
		}
	}
	c.mu.Unlock()
	if err := c.store.Forget(gone); err != nil {
		slog.Error("forget finished jobs", "err", err)
	}
	for i, j := range gone {
		execs[i].Remove(j.JobId, j.ArrayIndex)
	}
}

func (c *Controller) isAdmin(uid uint32) bool {
	if uid == 0 || slices.Contains(c.cfg.AdminUIDs, uid) {
		return true
	}
	name, _ := lookupUser(uid)
	return c.config().IsAdmin(name)
}
