package controller

import (
	"errors"
	"maps"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/hostload"
	"xce/lib/policy"
	"xce/lib/resreq"
	"xce/lib/sched"
	"xce/lib/version"
)

// Query returns the jobs bjobs asks for, in bjobs's order, as one reply
// (QueryParts with no bound on a part).
func (c *Controller) Query(who Caller, req *api.QueryRequest) *api.QueryReplyEncoded {
	var reply *api.QueryReplyEncoded
	c.QueryParts(who, req, 0, func(p *api.QueryReplyEncoded) error {
		reply = p
		return nil
	})
	return reply
}

// QueryParts hands send the jobs bjobs asks for, in bjobs's order:
// running and suspended jobs, then pending jobs in dispatch order, then
// finished jobs in the order they finished. Each part holds at most
// perPart jobs (any number when perPart <= 0) with the effective specs
// they need, and each is built only when the one before has been sent, so
// that a listing of many jobs is never held encoded whole. The first part
// carries the refs that named no job; there is always one part.
//
// A listing walks the job list kept in that order (order.go); jobs named
// by id are sorted among themselves. The lock is held only to collect the
// records; everything after happens outside it.
func (c *Controller) QueryParts(who Caller, req *api.QueryRequest, perPart int, send func(*api.QueryReplyEncoded) error) error {
	conf := c.config()
	items, notFound := c.queryItems(who, req, conf)
	if perPart <= 0 {
		perPart = max(len(items), 1)
	}
	q := queryParts{c: c, req: req, conf: conf, now: time.Now(), rules: map[string]exceptionRules{},
		viewer: who.UID, admin: c.isAdmin(who.UID)}
	for start := 0; start == 0 || start < len(items); start += perPart {
		part := q.part(items[start:min(start+perPart, len(items))])
		if start == 0 {
			part.NotFound = notFound
		}
		if err := send(part); err != nil {
			return err
		}
	}
	return nil
}

// queryItem is one job of a query's answer, as collected under the lock.
type queryItem struct {
	job    *api.Job
	eff    *effSpec
	reason string
}

// queryItems collects the jobs a query selects, in bjobs's order, and the
// refs that name no job.
func (c *Controller) queryItems(who Caller, req *api.QueryRequest, conf *config.Config) ([]queryItem, []*api.JobRef) {
	var (
		items    []queryItem
		notFound []*api.JobRef
	)
	filter := queryFilter(conf, req)
	add := func(r *rec) {
		it := queryItem{job: r.job, eff: r.eff}
		if !req.RecordsOnly {
			it.reason = c.pendReason(r)
		}
		items = append(items, it)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(req.Refs) > 0 {
		var found []orderEntry
		for _, ref := range req.Refs {
			recs := c.resolve(ref)
			if len(recs) == 0 {
				notFound = append(notFound, ref)
			}
			for _, r := range recs {
				if matches(who, req, &filter, r, true) {
					found = append(found, c.entryOf(r))
				}
			}
		}
		slices.SortFunc(found, func(a, b orderEntry) int { return compareKeys(&a.key, &b.key) })
		items = make([]queryItem, 0, len(found))
		for _, e := range found {
			add(e.r)
		}
		return items, notFound
	}
	for _, e := range c.jobsInOrder() {
		if matches(who, req, &filter, e.r, false) {
			add(e.r)
		}
	}
	return items, nil
}

// queryParts builds a query's reply parts.
type queryParts struct {
	c     *Controller
	req   *api.QueryRequest
	conf  *config.Config
	now   time.Time
	rules map[string]exceptionRules // by queue
	// Who asks: another user's job's environment is not theirs to see
	// (LSF's bjobs -env shows the caller's own jobs' or, to an
	// administrator, anyone's).
	viewer uint32
	admin  bool
}

// hideEnv reports whether the environment of a job of uid owner is
// withheld from the caller.
func (q *queryParts) hideEnv(owner uint32) bool {
	return !q.admin && owner != q.viewer
}

// part builds the reply part of items: their latest usage samples and
// exceptions (-x keeps only the jobs that show one) and their specs; with
// RecordsOnly the records and exceptions alone.
func (q *queryParts) part(items []queryItem) *api.QueryReplyEncoded {
	c, req := q.c, q.req
	if req.RecordsOnly {
		return q.records(items)
	}
	reply := &api.QueryReplyEncoded{
		Jobs:        make([]*api.Job, 0, len(items)),
		PendReasons: make([]string, 0, len(items)),
		Usage:       make([]*api.ResourceUsage, 0, len(items)),
		Effective:   make([]*api.EncodedSpec, 0, len(items)),
	}
	// Each job's effective spec goes once: an array's elements share it.
	// The messages are allocated in one block, not one by one.
	var sent map[int64]bool
	effs := make([]api.EncodedSpec, 0, len(items))
	for _, it := range items {
		j := it.job
		u := emptyUsage
		if isRunning(j.State) {
			if s := c.execOf(j).Usage(j.JobId, j.ArrayIndex); s != nil {
				u = s
			}
		}
		if j = q.withExceptions(it, u); j == nil {
			continue
		}
		reply.Jobs = append(reply.Jobs, j)
		reply.PendReasons = append(reply.PendReasons, it.reason)
		reply.Usage = append(reply.Usage, u)
		if j.ArraySize > 0 || j.ArrayIndex > 0 {
			if sent == nil {
				sent = map[int64]bool{}
			}
			if sent[j.JobId] {
				continue
			}
			sent[j.JobId] = true
		}
		eff := it.eff.raw
		if len(req.SpecFields) > 0 && !req.Submitted {
			eff = api.KeepFields(eff, req.SpecFields)
		}
		hide := q.hideEnv(it.eff.GetUid())
		if hide {
			eff = api.DropFields(eff, api.JobSpecEnvField, api.JobSpecEnvSpecField)
		}
		if req.Submitted {
			if raw, err := c.store.SubmittedRaw(j.JobId); err == nil {
				if hide {
					raw = api.DropFields(raw, api.JobSpecEnvField, api.JobSpecEnvSpecField)
				}
				reply.Specs = append(reply.Specs, &api.EncodedSpec{Key: j.JobId, Value: raw})
			}
			// The long form also shows where each value came from.
			if origin, err := c.store.OriginRaw(j.JobId); err == nil && origin != nil {
				eff = append(append([]byte(nil), eff...), origin...)
			}
		}
		effs = append(effs, api.EncodedSpec{Key: j.JobId, Value: eff})
		reply.Effective = append(reply.Effective, &effs[len(effs)-1])
	}
	return reply
}

// withExceptions is it's record with its exceptions, given its latest
// usage sample u (nil: look it up); nil when -x drops it.
func (q *queryParts) withExceptions(it queryItem, u *api.ResourceUsage) *api.Job {
	j := it.job
	var exc []string
	if j.StartTime != 0 { // a job that never ran has no exception
		cpu := j.GetUsage().GetCpuTimeMs()
		if isRunning(j.State) {
			if u == nil {
				if u = q.c.execOf(j).Usage(j.JobId, j.ArrayIndex); u == nil {
					u = emptyUsage
				}
			}
			cpu = u.CpuTimeMs
		}
		qn := it.eff.GetQueue()
		r, ok := q.rules[qn]
		if !ok {
			r = rulesOf(q.conf, qn)
			q.rules[qn] = r
		}
		exc = jobExceptions(j, cpu, time.Duration(it.eff.GetEstimatedRunSec())*time.Second, r, q.now)
	}
	if q.req.Exceptions && len(exc) == 0 {
		return nil
	}
	if len(exc) > 0 {
		// The record is shared: the exceptions go on a copy.
		j = proto.Clone(j).(*api.Job)
		j.Exceptions = api.ExceptionBits(exc)
	}
	return j
}

// records is part for a RecordsOnly query.
func (q *queryParts) records(items []queryItem) *api.QueryReplyEncoded {
	reply := &api.QueryReplyEncoded{Jobs: make([]*api.Job, 0, len(items))}
	for _, it := range items {
		if j := q.withExceptions(it, nil); j != nil {
			reply.Jobs = append(reply.Jobs, j)
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
	if e := req.Eligibility; e != api.QueryRequest_ANY && (ineligible(r) != (e == api.QueryRequest_INELIGIBLE)) {
		return false
	}
	return f.match(who, r, named)
}

// resolve finds the jobs a reference names: one element, or every element
// of a job for index -1 (c.mu held).
func (c *Controller) resolve(ref *api.JobRef) []*rec {
	if ref.ArrayIndex < 0 {
		return c.elements(ref.JobId)
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
	r, err := c.ListHosts(&api.ListHostsRequest{Names: names})
	if err != nil {
		return nil, err
	}
	return r.Hosts, nil
}

// ListHosts answers bhosts, lshosts and lsload: the hosts named (every
// host when none is) with their slot counts, load, what running jobs
// reserve and their static description; with req.ResReq only the hosts
// whose values, as the scheduler sees them now, match its select, sorted
// by its order[] section when it has one; and the cluster's shared
// resource pools with what running jobs reserve of them.
func (c *Controller) ListHosts(req *api.ListHostsRequest) (*api.ListHostsReply, error) {
	conf := c.config()
	filter, err := parseHostFilter(conf, req.ResReq, c.local())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	c.mu.Lock()
	names := c.hostNames
	if len(req.Names) > 0 {
		names = nil
		for _, n := range req.Names {
			if c.hosts[n] == nil && conf.ComputeUnit(n) != nil {
				names = append(names, cuMembers(conf, n, c.hosts)...)
				continue
			}
			if c.hosts[n] == nil {
				c.mu.Unlock()
				return nil, userErr("%s: Bad host name, host group name or cluster name", n)
			}
			names = append(names, n)
		}
	}
	byName := map[string]*api.Host{}
	var hosts []*api.Host
	cuHeld := c.cuExclHosts(conf)
	for _, name := range names {
		hs := c.hosts[name]
		h := c.hostView(hs)
		h.State, h.StatusDetail = c.hostStatus(hs)
		h.State, h.StatusDetail = cuExclStatus(h.State, h.StatusDetail, cuHeld[name])
		if hs.closed {
			h.AdminComment = c.closedHosts[name]
		}
		hist := &hs.load
		h.R1MHistory = append([]float32(nil), hist.r1m...)
		h.UtHistory = append([]float32(nil), hist.ut...)
		h.LoadIntervalSec = int32(loadInterval / time.Second)
		if hc := conf.Hosts[name]; hc != nil {
			h.Resources = slices.Sorted(slices.Values(hc.Attributes))
		}
		byName[name] = h
		hosts = append(hosts, h)
	}
	// Only running jobs hold slots and devices: not every job the
	// controller remembers.
	for _, r := range c.running {
		for _, es := range r.job.ExecHosts {
			h := byName[es.Host]
			if h == nil {
				continue
			}
			addGPUJob(h, r.job, es)
			switch r.job.State {
			case api.JobState_RUN, api.JobState_UNKWN:
				h.Run += es.Slots
			case api.JobState_SSUSP:
				h.Ssusp += es.Slots
			case api.JobState_USUSP:
				h.Ususp += es.Slots
			}
		}
	}
	for _, h := range hosts {
		h.Njobs = h.Run + h.Ssusp + h.Ususp
	}
	// The hosts asked for alone: what running jobs hold of them, and of
	// the shared resources, does not depend on the others.
	snap := c.snapshotOf(now, nil, slices.Compact(slices.Sorted(slices.Values(names))))
	view := sched.Look(snap)
	c.mu.Unlock()
	for _, h := range hosts {
		if hv := view.Hosts[h.Name]; len(hv.Reserved) > 0 {
			h.Reserved = hv.Reserved
		}
		fillGPUUse(h, view.Hosts[h.Name])
	}
	reply := &api.ListHostsReply{Hosts: filter.apply(hosts, view), Condensed: condensedUnits(conf)}
	for _, name := range slices.Sorted(maps.Keys(conf.Resources)) {
		if r := conf.Resources[name]; r.Shared() {
			reply.Shared = append(reply.Shared, &api.SharedResource{Name: name, Total: snap.Shared[name], // with what is borrowed
				Reserved: view.SharedReserved[name], Hosts: slices.Clone(c.hostNames)})
		}
	}
	c.addSupply(req, reply)
	return reply, nil
}

// hostCPUFactor is the local host's CPU factor: XCE does not benchmark
// hosts, and LSF's factor of an unknown model is 1.
const hostCPUFactor = 1.0

// hostFilter is a -R requirement of bhosts, lshosts and lsload compiled
// against the cluster's resources; a nil filter keeps every host.
type hostFilter struct {
	sel *resreq.Selector
	ord *resreq.Orderer
}

// parseHostFilter compiles a -R requirement. Only its select and order
// sections matter; a compound or alternative requirement is refused.
func parseHostFilter(conf *config.Config, text string, local resreq.Local) (*hostFilter, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	bad := func(err error) error {
		return userErr("%s: %v. Bad resource requirement syntax.", text, err)
	}
	r, err := resreq.Parse(text, resreq.WithSchema(conf.Schema()))
	if err != nil {
		return nil, bad(err)
	}
	if !r.IsSimple() {
		return nil, bad(errors.New("a compound or alternative requirement does not select hosts"))
	}
	f := &hostFilter{}
	if f.sel, err = conf.Schema().Compile(r.Simple.Select, local); err != nil {
		return nil, bad(err)
	}
	if r.Simple.Order != nil {
		if f.ord, err = conf.Schema().CompileOrder(r.Simple.Order); err != nil {
			return nil, bad(err)
		}
	}
	return f, nil
}

// apply keeps the hosts whose values in the view match, in the filter's
// order. A host the view does not know never matches.
func (f *hostFilter) apply(hosts []*api.Host, v *sched.View) []*api.Host {
	if f == nil {
		return hosts
	}
	var out []*api.Host
	for _, h := range hosts {
		if hv, ok := v.Hosts[h.Name]; ok && hv.Values != nil && f.sel.Match(hv.Values) {
			out = append(out, h)
		}
	}
	if f.ord != nil {
		slices.SortStableFunc(out, func(a, b *api.Host) int { return f.ord.Compare(v.Hosts[a.Name].Values, v.Hosts[b.Name].Values) })
	}
	return out
}

// ListQueues answers bqueues: the queues named (every queue when none
// is); with req.Host only those that can use that host, a host of that
// group, or (the cluster's name, "all") any host; with req.User only those
// that user, a member of that group, or ("all") every user may use; with
// req.ShareInfo the fairshare queues' share accounts.
func (c *Controller) ListQueues(req *api.ListQueuesRequest) ([]*api.Queue, error) {
	qs, err := c.Queues(req.Names)
	if err != nil {
		return nil, err
	}
	conf := c.config()
	if req.Host != "" {
		if qs, err = c.queuesForHost(conf, qs, req.Host); err != nil {
			return nil, err
		}
	}
	if req.User != "" {
		if qs, err = queuesForUser(conf, qs, req.User); err != nil {
			return nil, err
		}
	}
	if req.ShareInfo {
		c.addShareAccounts(conf, qs)
	}
	return qs, nil
}

// queuesForHost keeps the queues whose hosts include name (a host), one
// of its hosts (a host group), or any host (the cluster's name or "all").
func (c *Controller) queuesForHost(conf *config.Config, qs []*api.Queue, name string) ([]*api.Queue, error) {
	if name == "all" || name == conf.Cluster.Name {
		return qs, nil
	}
	groups := map[string][]string{}
	for n, g := range conf.HostGroups {
		groups[n] = g.Members
	}
	known := slices.Collect(maps.Keys(conf.Hosts))
	if conf.Hosts[c.cfg.Host] == nil {
		known = append(known, c.cfg.Host)
	}
	var hosts []string
	switch {
	case slices.Contains(known, name):
		hosts = []string{name}
	case groups[name] != nil:
		for _, h := range known {
			if sched.HostListIncludes([]string{name}, h, groups) {
				hosts = append(hosts, h)
			}
		}
	default:
		return nil, userErr("%s: Bad host name, host group name or cluster name", name)
	}
	var out []*api.Queue
	for _, q := range qs {
		cq := conf.Queues[q.Name]
		if cq == nil {
			continue // lost_and_found dispatches nothing
		}
		if slices.ContainsFunc(hosts, func(h string) bool { return sched.HostListIncludes(cq.Hosts, h, groups) }) {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return nil, userErr("%s: Host or host group is not used by the queue", name)
	}
	return out, nil
}

// queuesForUser keeps the queues that accept jobs from user: a user, any
// member of a user group (or the group named in the queue's users), or
// with "all" the queues open to every user.
func queuesForUser(conf *config.Config, qs []*api.Queue, name string) ([]*api.Queue, error) {
	users := []string{name}
	if g := conf.UserGroups[name]; g != nil {
		users = append(users, groupMembers(conf, name, map[string]bool{})...)
	} else if name != "all" && !knownUser(conf, name) {
		return nil, userErr("%s: Unknown user", name)
	}
	var out []*api.Queue
	for _, q := range qs {
		cq := conf.Queues[q.Name]
		if cq == nil {
			continue
		}
		if name == "all" && slices.ContainsFunc(cq.Users, func(u string) bool { return strings.HasPrefix(u, "~") }) {
			continue // open to all but some
		}
		if slices.ContainsFunc(users, func(u string) bool { return conf.UserIn(u, cq.Users) }) {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return nil, userErr("%s: User cannot use the queue", name)
	}
	return out, nil
}

// groupMembers lists the users of a user group, its subgroups expanded.
func groupMembers(conf *config.Config, name string, seen map[string]bool) []string {
	g := conf.UserGroups[name]
	if g == nil || seen[name] {
		return nil
	}
	seen[name] = true
	var out []string
	for _, m := range g.Members {
		if conf.UserGroups[m] != nil {
			out = append(out, groupMembers(conf, m, seen)...)
		} else if m != "all" && !strings.HasPrefix(m, "~") {
			out = append(out, m)
		}
	}
	return out
}

// knownUser reports whether name is a user of the system or one the
// configuration names.
func knownUser(conf *config.Config, name string) bool {
	if _, err := user.Lookup(name); err == nil {
		return true
	}
	if conf.Users[name] != nil || slices.Contains(conf.Cluster.Administrators, name) {
		return true
	}
	for _, g := range conf.UserGroups {
		if slices.Contains(g.Members, name) {
			return true
		}
	}
	for _, q := range conf.Queues {
		if _, ok := q.Fairshare[name]; ok || slices.Contains(q.Users, name) {
			return true
		}
	}
	return false
}

// addShareAccounts fills the share accounts of the fairshare queues among
// qs (bqueues -r): every account the queue's shares name but "default",
// and every user charged under "default" who has jobs in the queue, by
// name. Each shows its shares, its dynamic priority as the scheduler
// computes it now, the slots its running jobs hold, and its CPU and run
// time (slot-seconds): finished jobs' decayed as lib/sched decays them,
// plus running jobs' so far.
func (c *Controller) addShareAccounts(conf *config.Config, qs []*api.Queue) {
	now := time.Now()
	c.mu.Lock()
	view := sched.Look(c.snapshot(now, nil))
	usage := c.fairUsage(conf)
	withJobs := map[string]map[string]bool{}
	cpu := map[string]map[string]float64{}
	for k, r := range c.jobs {
		q := conf.Queues[r.eff.GetQueue()]
		if q == nil || len(q.Fairshare) == 0 {
			continue
		}
		acct := policy.FairAccount(conf, q.Name, r.eff.GetUserGroup())
		if acct == "" {
			acct = r.eff.GetUser()
		}
		if withJobs[q.Name] == nil {
			withJobs[q.Name], cpu[q.Name] = map[string]bool{}, map[string]float64{}
		}
		withJobs[q.Name][acct] = true
		if u := c.used[k]; u != nil && isRunning(r.job.State) {
			cpu[q.Name][acct] += float64(u.CpuTimeMs) / 1000
		}
	}
	c.mu.Unlock()
	for _, q := range qs {
		cq := conf.Queues[q.Name]
		if cq == nil || len(cq.Fairshare) == 0 {
			continue
		}
		fs := &sched.Fairshare{Shares: cq.Fairshare, Usage: usage[q.Name]}
		names := map[string]bool{}
		for n := range cq.Fairshare {
			if n != "default" {
				names[n] = true
			}
		}
		for n := range withJobs[q.Name] {
			names[n] = true
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			shares, ok := cq.Fairshare[n]
			if !ok {
				if shares, ok = cq.Fairshare["default"]; !ok {
					shares = 1
				}
			}
			run := view.Fair[q.Name][n]
			hcpu, hrun := fs.History(n, now)
			q.ShareAccounts = append(q.ShareAccounts, &api.ShareAccount{
				Name: n, Group: conf.UserGroups[n] != nil, Shares: int32(shares),
				Priority:   sched.DynamicPriority(fs, n, now, run.RunHours, run.Slots),
				Started:    int32(run.Slots),
				CpuTimeSec: hcpu.Seconds() + cpu[q.Name][n],
				RunTimeSec: hrun.Seconds() + run.RunHours*3600,
			})
		}
	}
}

// loadInterval is how often the controller samples the host's load for
// its history; loadSamples of them are kept (an hour).
const (
	loadInterval = 30 * time.Second
	loadSamples  = 120
)

// loadHistory is the host's recent r1m and CPU utilisation (c.mu).
type loadHistory struct {
	r1m, ut []float32
}

// sampleLoad adds one sample to the history (c.mu not held; it takes it
// to append).
func (c *Controller) sampleLoad() {
	ix := c.hostLoad.Latest(time.Now(), time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.hosts {
		switch {
		case h.local:
			h.load.add(ix.R1m, ix.Ut)
		case h.connected() && h.attrs != nil:
			h.load.add(h.attrs.R1M, h.attrs.Ut)
		}
	}
}

// add appends a sample, keeping the last loadSamples.
func (l *loadHistory) add(r1m, ut float64) {
	l.r1m = append(l.r1m, float32(r1m))
	l.ut = append(l.ut, float32(ut))
	if n := len(l.r1m); n > loadSamples {
		l.r1m = append(l.r1m[:0], l.r1m[n-loadSamples:]...)
		l.ut = append(l.ut[:0], l.ut[n-loadSamples:]...)
	}
}

// fillLoad gives h the local host's load indices, from a sample at most a
// second old (the controller's loop samples every second, which keeps
// the averaged indices current).
func (c *Controller) fillLoad(h *api.Host) {
	hostload.Fill(h, c.hostLoad.Latest(time.Now(), time.Second))
	h.ElimValues = c.localElimValues()
}

// Info describes the cluster and the caller.
func (c *Controller) Info(who Caller) *api.ClusterInfo {
	conf := c.config()
	info := &api.ClusterInfo{
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
		Parameters:     c.parameters(conf),
		Resources:      resources(conf),
		ComputeUnits:   computeUnits(conf),
	}
	if r := c.cfg.Replication; r != nil {
		info.Candidates = r.Candidates()
		info.Leader = r.Address()
	}
	return info
}

// Version is XCE's release ("XCE 0.1.0"), as the controller reports it
// (lib/version owns it).
var Version = version.Short()

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
