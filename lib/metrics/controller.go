package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"xce/lib/api"
	"xce/lib/controller"
	"xce/lib/replica"
	"xce/lib/store"
)

// Controller is the controller's metrics: a collector that reads the
// counts the controller keeps when scraped, and the histograms the
// controller's hooks feed (scheduling cycles, store commits, calls).
// Under HA the controller changes with each term: SetController points
// the collector at the one leading now (nil on a standby).
type Controller struct {
	ctl   atomic.Pointer[controller.Controller]
	store atomic.Pointer[store.Store]
	node  atomic.Pointer[replica.Node]

	cycle  prometheus.Histogram
	commit prometheus.Histogram
	RPC    *RPC
}

// NewController registers the controller's metrics in r.
func NewController(r *Registry) *Controller {
	m := &Controller{
		cycle: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "xce_scheduler_cycle_seconds",
			Help:    "How long each scheduling cycle took (with the controller's lock held).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "xce_store_commit_duration_seconds",
			Help:    "How long each durable write of the store took (synced; replicated to a quorum under HA).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		RPC: NewRPC(r),
	}
	r.MustRegister(m.cycle, m.commit, m)
	return m
}

// ObserveCycle is controller.Config.ObserveCycle.
func (m *Controller) ObserveCycle(took time.Duration) { m.cycle.Observe(took.Seconds()) }

// SetController points the collector at the controller that leads now;
// nil: none (a standby, or one still restoring).
func (m *Controller) SetController(c *controller.Controller) { m.ctl.Store(c) }

// SetStore has the store's size and commit times recorded.
func (m *Controller) SetStore(s *store.Store) {
	m.store.Store(s)
	s.ObserveCommits(func(d time.Duration) { m.commit.Observe(d.Seconds()) })
}

// SetNode has the raft state of this candidate recorded (HA).
func (m *Controller) SetNode(n *replica.Node) { m.node.Store(n) }

var (
	descJobs = prometheus.NewDesc("xce_jobs",
		"Jobs the controller knows (what bjobs -a -u all lists), by state and queue.", []string{"state", "queue"}, nil)
	descUserJobs = prometheus.NewDesc("xce_user_jobs",
		"Unfinished jobs by queue, user and state.", []string{"queue", "user", "state"}, nil)
	descUserSlots = prometheus.NewDesc("xce_user_slots",
		"Slots of the unfinished jobs by queue, user and state: allocated while running or suspended, asked for while pending.", []string{"queue", "user", "state"}, nil)
	descUserGPUs = prometheus.NewDesc("xce_user_gpus",
		"GPUs allocated to the running and suspended jobs, by queue, user and state.", []string{"queue", "user", "state"}, nil)
	descSubmitted = prometheus.NewDesc("xce_jobs_submitted_total",
		"Jobs (array elements each) submitted since this controller started leading.", nil, nil)
	descDispatched = prometheus.NewDesc("xce_jobs_dispatched_total",
		"Jobs dispatched to hosts since this controller started leading.", nil, nil)
	descFinished = prometheus.NewDesc("xce_jobs_finished_total",
		"Jobs that ended since this controller started leading, by end state (DONE, EXIT).", []string{"state"}, nil)
	descHosts = prometheus.NewDesc("xce_hosts",
		"Execution hosts by state, as bhosts shows it (ok, closed_Full, closed_Adm, closed_Excl, unreach, unavail).", []string{"state"}, nil)
	descHostSlots = prometheus.NewDesc("xce_host_slots",
		"Each host's job slots (MXJ).", []string{"host"}, nil)
	descHostSlotsUsed = prometheus.NewDesc("xce_host_slots_used",
		"Each host's slots in use by running and suspended jobs.", []string{"host"}, nil)
	descSlots = prometheus.NewDesc("xce_slots",
		"The cluster's job slots: used, and free on hosts that can take jobs now (state ok).", []string{"state"}, nil)
	descCandidates = prometheus.NewDesc("xce_scheduler_candidate_jobs",
		"Pending jobs the last scheduling cycle handed to the placement.", nil, nil)
	descBuckets = prometheus.NewDesc("xce_scheduler_pending_buckets",
		"Buckets of pending jobs with identical requirements in the last scheduling cycle (placed together).", nil, nil)
	descLastCycle = prometheus.NewDesc("xce_scheduler_last_cycle_timestamp_seconds",
		"When the last scheduling cycle ran (unix seconds).", nil, nil)
	descLeading = prometheus.NewDesc("xce_controller_leader",
		"1 while this xced is the controller (the only one, or the leading candidate), 0 on a standby.", nil, nil)
	descStarted = prometheus.NewDesc("xce_controller_start_time_seconds",
		"When this controller started leading (unix seconds).", nil, nil)
	descStoreSize = prometheus.NewDesc("xce_store_size_bytes",
		"The store's size on disk, by part: lsm (keys and small values) and vlog (Badger's value log).", []string{"part"}, nil)
	descRaftState = prometheus.NewDesc("xce_raft_state",
		"1 for this candidate's raft role (Leader, Follower, Candidate, Shutdown), 0 for the others.", []string{"role"}, nil)
	descRaftTerm = prometheus.NewDesc("xce_raft_term",
		"This candidate's current raft term.", nil, nil)
	descRaftCommit = prometheus.NewDesc("xce_raft_commit_index",
		"The last raft log index this candidate knows committed.", nil, nil)
	descRaftApplied = prometheus.NewDesc("xce_raft_applied_index",
		"The last raft log index handed to this candidate's store.", nil, nil)
	descRaftLast = prometheus.NewDesc("xce_raft_last_log_index",
		"The last index in this candidate's raft log.", nil, nil)
	descRaftContact = prometheus.NewDesc("xce_raft_last_contact_seconds",
		"Seconds since this follower last heard from the leader (0 on the leader).", nil, nil)
)

// Describe is prometheus.Collector's.
func (m *Controller) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobs, descUserJobs, descUserSlots, descUserGPUs, descSubmitted, descDispatched,
		descFinished, descHosts, descHostSlots, descHostSlotsUsed, descSlots, descCandidates, descBuckets, descLastCycle,
		descLeading, descStarted, descStoreSize, descRaftState, descRaftTerm, descRaftCommit, descRaftApplied,
		descRaftLast, descRaftContact} {
		ch <- d
	}
}

// jobStates are the states xce_jobs always has (0 when none), so that a
// dashboard's series do not come and go.
var jobStates = []api.JobState{api.JobState_PEND, api.JobState_PSUSP, api.JobState_RUN, api.JobState_USUSP,
	api.JobState_SSUSP, api.JobState_DONE, api.JobState_EXIT, api.JobState_UNKWN}

// Collect is prometheus.Collector's: the controller's counts, copied
// under its lock in one call (controller.Stats).
func (m *Controller) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	if n := m.node.Load(); n != nil {
		st := n.Status()
		for _, role := range []string{"Leader", "Follower", "Candidate", "Shutdown"} {
			v := 0.0
			if st.Role == role {
				v = 1
			}
			gauge(descRaftState, v, role)
		}
		gauge(descRaftTerm, float64(st.Term))
		gauge(descRaftCommit, float64(st.CommitIndex))
		gauge(descRaftApplied, float64(st.AppliedIndex))
		gauge(descRaftLast, float64(st.LastIndex))
		contact := st.LastContactSeconds
		if st.Role == "Leader" {
			contact = 0
		}
		gauge(descRaftContact, contact)
	}
	if s := m.store.Load(); s != nil {
		lsm, vlog := s.Size()
		gauge(descStoreSize, float64(lsm), "lsm")
		gauge(descStoreSize, float64(vlog), "vlog")
	}
	c := m.ctl.Load()
	if c == nil {
		gauge(descLeading, 0)
		return
	}
	gauge(descLeading, 1)
	s := c.Stats()
	gauge(descStarted, float64(s.Started.UnixNano())/1e9)
	counter(descSubmitted, float64(s.Submitted))
	counter(descDispatched, float64(s.Dispatched))
	counter(descFinished, float64(s.Done), "DONE")
	counter(descFinished, float64(s.Exit), "EXIT")

	type sq struct {
		state api.JobState
		queue string
	}
	byQueue := map[sq]int64{}
	queues := map[string]bool{}
	for _, g := range s.Jobs {
		byQueue[sq{g.State, g.Queue}] += g.Jobs
		queues[g.Queue] = true
		if g.State == api.JobState_DONE || g.State == api.JobState_EXIT {
			continue
		}
		st := g.State.String()
		gauge(descUserJobs, float64(g.Jobs), g.Queue, g.User, st)
		gauge(descUserSlots, float64(g.Slots), g.Queue, g.User, st)
		if g.GPUs > 0 {
			gauge(descUserGPUs, float64(g.GPUs), g.Queue, g.User, st)
		}
	}
	for q := range queues {
		for _, st := range jobStates {
			gauge(descJobs, float64(byQueue[sq{st, q}]), st.String(), q)
		}
	}

	hostStates := map[string]int{"ok": 0, "closed_Full": 0, "closed_Adm": 0, "closed_Excl": 0, "unreach": 0, "unavail": 0}
	var used, free int
	for _, h := range s.Hosts {
		hostStates[h.Status]++
		gauge(descHostSlots, float64(h.Slots), h.Name)
		gauge(descHostSlotsUsed, float64(h.Used), h.Name)
		used += h.Used
		if h.Status == "ok" {
			free += max(h.Slots-h.Used, 0)
		}
	}
	for st, n := range hostStates {
		gauge(descHosts, float64(n), st)
	}
	gauge(descSlots, float64(used), "used")
	gauge(descSlots, float64(free), "free")
	gauge(descCandidates, float64(s.Candidates))
	gauge(descBuckets, float64(s.Buckets))
	if !s.LastCycle.IsZero() {
		gauge(descLastCycle, float64(s.LastCycle.UnixNano())/1e9)
	}
}

// Leading says whether a controller is set (SetController).
func (m *Controller) Leading() bool { return m.ctl.Load() != nil }
