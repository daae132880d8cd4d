package controller

import (
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/sched"
)

// Query returns the jobs bjobs asks for, in bjobs's order: running and
// suspended jobs, then pending jobs in dispatch order, then finished jobs.
// The lock is held only to collect the records and their sort keys; the
// sorting and everything after happen outside it.
func (c *Controller) Query(who Caller, req *api.QueryRequest) *api.QueryReplyEncoded {
	reply := &api.QueryReplyEncoded{}
	type item struct {
		job    *api.Job
		eff    *effSpec
		reason string
		group  int
		qprio  int32
		uprio  int32
	}
	var items []item
	conf := c.config()
	filter := queryFilter(conf, req)
	add := func(r *rec) {
		it := item{job: r.job, eff: r.eff, group: listGroup(r.job.State), reason: c.pendReason(r)}
		if it.group == 1 {
			it.qprio, it.uprio = c.queuePrio(r), r.eff.GetUserPriority()
		}
		items = append(items, it)
	}
	c.mu.Lock()
	if len(req.Refs) > 0 {
		for _, ref := range req.Refs {
			found := c.resolve(ref)
			if len(found) == 0 {
				reply.NotFound = append(reply.NotFound, ref)
			}
			for _, r := range found {
				if matches(who, req, &filter, r, true) {
					add(r)
				}
			}
		}
	} else {
		for _, r := range c.jobs {
			if matches(who, req, &filter, r, false) {
				add(r)
			}
		}
	}
	c.mu.Unlock()

	sort.Slice(items, func(a, b int) bool {
		x, y := &items[a], &items[b]
		if x.group != y.group {
			return x.group < y.group
		}
		if x.qprio != y.qprio {
			return x.qprio > y.qprio
		}
		if x.uprio != y.uprio {
			return x.uprio > y.uprio
		}
		if x.group == 1 && x.job.Order != y.job.Order {
			return x.job.Order < y.job.Order
		}
		if x.job.JobId != y.job.JobId {
			return x.job.JobId < y.job.JobId
		}
		return x.job.ArrayIndex < y.job.ArrayIndex
	})
	// The latest usage samples and the exceptions (which need them) are
	// gathered outside the lock; -x keeps only the jobs that show one.
	now := time.Now()
	rules := map[string]exceptionRules{}
	usage := make([]*api.ResourceUsage, 0, len(items))
	kept := items[:0]
	for _, it := range items {
		j := it.job
		u := emptyUsage
		if isRunning(j.State) {
			if s := c.exec.Usage(j.JobId, j.ArrayIndex); s != nil {
				u = s
			}
		}
		cpu := j.GetUsage().GetCpuTimeMs()
		if isRunning(j.State) {
			cpu = u.CpuTimeMs
		}
		q := it.eff.GetQueue()
		r, ok := rules[q]
		if !ok {
			r = rulesOf(conf, q)
			rules[q] = r
		}
		exc := jobExceptions(j, cpu, time.Duration(it.eff.GetEstimatedRunSec())*time.Second, r, now)
		if req.Exceptions && len(exc) == 0 {
			continue
		}
		if len(exc) > 0 {
			// The record is shared: the exceptions go on a copy.
			j = proto.Clone(j).(*api.Job)
			j.Exceptions = exc
			it.job = j
		}
		kept = append(kept, it)
		usage = append(usage, u)
	}
	items = kept
	reply.Jobs = make([]*api.Job, len(items))
	reply.PendReasons = make([]string, len(items))
	reply.Usage = usage
	sent := map[int64]bool{}
	for i, it := range items {
		j := it.job
		reply.Jobs[i] = j
		reply.PendReasons[i] = it.reason
		if !sent[j.JobId] {
			sent[j.JobId] = true
			eff := it.eff.raw
			if req.Submitted {
				if raw, err := c.store.SubmittedRaw(j.JobId); err == nil {
					reply.Specs = append(reply.Specs, &api.EncodedSpec{Key: j.JobId, Value: raw})
				}
				// The long form also shows where each value came from.
				if origin, err := c.store.OriginRaw(j.JobId); err == nil && origin != nil {
					eff = append(append([]byte(nil), eff...), origin...)
				}
			}
			reply.Effective = append(reply.Effective, &api.EncodedSpec{Key: j.JobId, Value: eff})
		}
	}
	return reply
}

// emptyUsage stands for "no sample" in replies; it is never modified.
var emptyUsage = &api.ResourceUsage{}

// matches applies bjobs's state scope and its filters. A job named by id
// is shown whoever owns it, as LSF does; the user filter applies to
// listings.
func matches(who Caller, req *api.QueryRequest, f *jobFilter, r *rec, named bool) bool {
	s := r.job.State
	switch req.Scope {
	case api.QueryRequest_UNFINISHED:
		if isFinished(s) {
			return false
		}
	case api.QueryRequest_FINISHED:
		if !isFinished(s) {
			return false
		}
	case api.QueryRequest_PENDING:
		if s != api.JobState_PEND && s != api.JobState_PSUSP {
			return false
		}
	case api.QueryRequest_RUNNING:
		if s != api.JobState_RUN {
			return false
		}
	case api.QueryRequest_SUSPENDED:
		if s != api.JobState_USUSP && s != api.JobState_SSUSP && s != api.JobState_PSUSP {
			return false
		}
	}
	return f.match(who, r, named)
}

// resolve finds the jobs a reference names: one element, or every element
// of a job for index -1 (c.mu held).
func (c *Controller) resolve(ref *api.JobRef) []*rec {
	if ref.ArrayIndex < 0 {
		return c.byID[ref.JobId]
	}
	if r := c.jobs[key{ref.JobId, ref.ArrayIndex}]; r != nil {
		return []*rec{r}
	}
	return nil
}

// userMatches applies a -u filter: "" the caller's own jobs, "all" every
// job, else one user's.
func userMatches(who Caller, user string, r *rec) bool {
	switch user {
	case "all":
		return true
	case "":
		return r.eff.GetUid() == who.UID
	}
	return r.eff.GetUser() == user
}

func listGroup(s api.JobState) int {
	switch {
	case isRunning(s):
		return 0
	case isFinished(s):
		return 2
	}
	return 1
}

// Events returns the event logs of jobs.
func (c *Controller) Events(who Caller, refs []*api.JobRef) ([]*api.Event, error) {
	var out []*api.Event
	for _, ref := range refs {
		evs, err := c.store.Events(ref.JobId, ref.ArrayIndex)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

// slotTally counts the slots of unfinished jobs by state (bqueues, bapp).
type slotTally struct{ njobs, pend, run, ssusp, ususp int32 }

// slotCounts adds up the unfinished jobs' slots per group, as by names
// them (c.mu held).
func (c *Controller) slotCounts(by func(*rec) string) map[string]slotTally {
	out := map[string]slotTally{}
	for _, r := range c.jobs {
		n := max(r.job.AllocSlots, r.eff.GetMinTasks())
		k := out[by(r)]
		switch r.job.State {
		case api.JobState_PEND, api.JobState_PSUSP:
			k.pend += n
		case api.JobState_RUN:
			k.run += n
		case api.JobState_SSUSP:
			k.ssusp += n
		case api.JobState_USUSP:
			k.ususp += n
		default:
			continue
		}
		k.njobs += n
		out[by(r)] = k
	}
	return out
}

// Queues lists queues with their live counts.
func (c *Controller) Queues(names []string) ([]*api.Queue, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := c.slotCounts(func(r *rec) string { return r.eff.GetQueue() })
	prios := c.fairPriorities()
	var out []*api.Queue
	add := func(q *api.Queue) {
		n := counts[q.Name]
		cp := proto.Clone(q).(*api.Queue)
		cp.Njobs, cp.Pend, cp.Run, cp.Ssusp, cp.Ususp = n.njobs, n.pend, n.run, n.ssusp, n.ususp
		cp.UserPriority = prios[q.Name]
		out = append(out, cp)
	}
	if len(names) == 0 {
		// Highest priority first, as bqueues lists them.
		for _, name := range c.config().QueueNames() {
			add(c.queues[name].q)
		}
		if lf := c.queues[LostAndFound]; lf != nil {
			add(lf.q)
		}
		return out, nil
	}
	for _, name := range names {
		q := c.queues[name]
		if q == nil {
			return nil, userErr("%s: No such queue", name)
		}
		add(q.q)
	}
	return out, nil
}

// Apps lists the application profiles with their live counts.
func (c *Controller) Apps(names []string) ([]*api.App, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := c.config().APIApps()
	byName := map[string]*api.App{}
	for _, a := range all {
		byName[a.Name] = a
	}
	for name, n := range c.slotCounts(func(r *rec) string { return r.eff.GetApp() }) {
		if a := byName[name]; a != nil {
			a.Njobs, a.Pend, a.Run, a.Ssusp, a.Ususp = n.njobs, n.pend, n.run, n.ssusp, n.ususp
		}
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []*api.App
	for _, n := range names {
		a := byName[n]
		if a == nil {
			return nil, userErr("%s: No such application profile", n)
		}
		out = append(out, a)
	}
	return out, nil
}

// Hosts lists the hosts with their slot counts and load.
func (c *Controller) Hosts(names []string) ([]*api.Host, error) {
	for _, n := range names {
		if n != c.cfg.Host {
			return nil, userErr("%s: Bad host name, host group name or cluster name", n)
		}
	}
	c.mu.Lock()
	h := &api.Host{
		Name:     c.cfg.Host,
		State:    api.HostState_HOST_OK,
		MaxSlots: int32(c.cfg.Slots),
		Ncpus:    int32(c.cfg.NCPUs),
		MaxmemKb: c.cfg.MaxMemKB,
		Type:     "X86_64",
		Model:    "x86_64",
	}
	for _, r := range c.jobs {
		s := r.job.AllocSlots
		switch r.job.State {
		case api.JobState_RUN:
			h.Run += s
		case api.JobState_SSUSP:
			h.Ssusp += s
		case api.JobState_USUSP:
			h.Ususp += s
		}
	}
	h.Njobs = h.Run + h.Ssusp + h.Ususp
	if int(h.Njobs) >= c.cfg.Slots || c.host.exclusive || c.host.closed {
		h.State, h.StatusDetail = api.HostState_HOST_CLOSED, "closed_Full"
		switch {
		case c.host.closed:
			h.StatusDetail = "closed_Adm"
		case c.host.exclusive:
			h.StatusDetail = "closed_Excl"
		}
	} else {
		h.StatusDetail = "ok"
	}
	h.R1MHistory = append([]float32(nil), c.load.r1m...)
	h.UtHistory = append([]float32(nil), c.load.ut...)
	h.LoadIntervalSec = int32(loadInterval / time.Second)
	c.mu.Unlock()
	fillLoad(h)
	h.Ut = c.load.lastUt()
	return []*api.Host{h}, nil
}

// loadInterval is how often the controller samples the host's load for
// its history; loadSamples of them are kept (an hour).
const (
	loadInterval = 30 * time.Second
	loadSamples  = 120
)

// loadHistory is the host's recent r1m and CPU utilisation.
type loadHistory struct {
	mu        sync.Mutex // only for prevBusy/prevTotal and last, read outside c.mu
	r1m, ut   []float32  // guarded by c.mu
	prevBusy  uint64
	prevTotal uint64
	last      float64
}

// sample adds one sample (c.mu not held; it takes it to append).
func (c *Controller) sampleLoad() {
	h := &api.Host{}
	fillLoad(h)
	ut := c.load.cpuUtil()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load.r1m = append(c.load.r1m, float32(h.R1M))
	c.load.ut = append(c.load.ut, float32(ut))
	if n := len(c.load.r1m); n > loadSamples {
		c.load.r1m = append(c.load.r1m[:0], c.load.r1m[n-loadSamples:]...)
		c.load.ut = append(c.load.ut[:0], c.load.ut[n-loadSamples:]...)
	}
}

// cpuUtil is the share of CPU time spent busy since the last call, from
// /proc/stat (0..1).
func (l *loadHistory) cpuUtil() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0
	}
	var total, idle uint64
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	busy := total - idle
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prevTotal > 0 && total > l.prevTotal {
		l.last = float64(busy-l.prevBusy) / float64(total-l.prevTotal)
	}
	l.prevBusy, l.prevTotal = busy, total
	return l.last
}

func (l *loadHistory) lastUt() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// fillLoad reads the local host's load indices.
func fillLoad(h *api.Host) {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		var f [3]float64
		fields := strings.Fields(string(b))
		for i := 0; i < 3 && i < len(fields); i++ {
			f[i], _ = strconv.ParseFloat(fields[i], 64)
		}
		h.R15S, h.R1M, h.R15M = f[0], f[1], f[2]
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		fields := strings.Fields(string(b))
		for i := 0; i+1 < len(fields); i++ {
			v, _ := strconv.ParseInt(fields[i+1], 10, 64)
			switch fields[i] {
			case "MemAvailable:":
				h.MemKb = v
			case "SwapFree:":
				h.SwpKb = v
			case "SwapTotal:":
				h.MaxswpKb = v
			}
		}
	}
}

// Info describes the cluster and the caller.
func (c *Controller) Info(who Caller) *api.ClusterInfo {
	conf := c.config()
	return &api.ClusterInfo{
		ClusterName:    conf.Cluster.Name,
		MasterHost:     c.cfg.Host,
		Version:        Version,
		StateDir:       c.cfg.StateDir,
		Started:        c.started.UnixNano(),
		Uid:            who.UID,
		CallerIsAdmin:  c.isAdmin(who.UID),
		UserSlotLimits: userLimits(conf),
		DefaultQueue:   conf.Cluster.DefaultQueue,
		CleanPeriodSec: int64(conf.Cluster.CleanPeriod),
		MaxArraySize:   int32(conf.Cluster.MaxArraySize),
		UserGroups:     groups(conf.UserGroups, func(g *config.UserGroup) []string { return g.Members }),
		HostGroups:     groups(conf.HostGroups, func(g *config.HostGroup) []string { return g.Members }),
		Pid:            int32(os.Getpid()),
	}
}

// Version is XCE's version, printed by -V.
const Version = "XCE 0.1"

func userLimits(conf *config.Config) map[string]int32 {
	out := map[string]int32{}
	for name, u := range conf.Users {
		if u.MaxSlots > 0 {
			out[name] = int32(u.MaxSlots)
		}
	}
	return out
}

// fairPriorities is each user's dynamic priority in each fairshare queue,
// as lib/sched computes it, for the users with jobs there (c.mu held).
func (c *Controller) fairPriorities() map[string]map[string]float64 {
	conf := c.config()
	usage := c.fairUsage(conf)
	now := time.Now()
	type held struct {
		runHours float64
		slots    int
	}
	users := map[string]map[string]held{}
	for _, r := range c.jobs {
		q := conf.Queues[r.eff.GetQueue()]
		if q == nil || len(q.Fairshare) == 0 || isFinished(r.job.State) {
			continue
		}
		if users[q.Name] == nil {
			users[q.Name] = map[string]held{}
		}
		h := users[q.Name][r.eff.GetUser()]
		if isRunning(r.job.State) {
			h.slots += int(r.job.AllocSlots)
			h.runHours += float64(r.job.AllocSlots) * max(0, now.Sub(time.Unix(0, r.job.StartTime)).Hours())
		}
		users[q.Name][r.eff.GetUser()] = h
	}
	out := map[string]map[string]float64{}
	for qname, us := range users {
		fs := &sched.Fairshare{Shares: conf.Queues[qname].Fairshare, Usage: usage[qname]}
		out[qname] = map[string]float64{}
		for u, h := range us {
			out[qname][u] = sched.DynamicPriority(fs, u, now, h.runHours, h.slots)
		}
	}
	return out
}

// groups lists configured groups by name.
func groups[G any](m map[string]G, members func(G) []string) []*api.Group {
	var out []*api.Group
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, &api.Group{Name: name, Members: members(m[name])})
	}
	return out
}
