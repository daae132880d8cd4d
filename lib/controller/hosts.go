package controller

import (
	"errors"
	"fmt"
	"log/slog"
	"os/user"
	"slices"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/config"
	"xce/lib/gpu"
	"xce/lib/hostlist"
	"xce/lib/hostload"
	"xce/lib/resreq"
	"xce/lib/sched"
	"xce/lib/store"
)

// host is one execution host: the embedded worker's (local) or a remote
// worker's, known from its registration, from a running job's record
// after a restart, or from the configuration (c.mu guards it).
type host struct {
	name  string
	local bool
	// exec is the host's worker while it is connected; nil otherwise.
	exec Executor
	// conn is the remote worker's connection (nil for the local host).
	conn *workerConn
	// attrs: the static attributes a remote worker registered, with the
	// load fields of its latest sample.
	attrs *api.Host
	// slots is the host's job slots (MXJ): configured, else registered.
	slots     int
	used      int
	exclusive bool // running an exclusive job
	closed    bool // badmin hclose
	// lostAt: when the remote worker went (or, for a host only known from
	// a running job, when this controller started); zero while connected.
	lostAt  time.Time
	unavail bool // past the grace: its jobs are UNKWN
	load    loadHistory
	// A provisioned host (supply.go): its instance and template, closed
	// for its return (closed_RC); drained by badmin hdrain.
	instance, rcTemplate string
	rcClosed, drained    bool
}

// connected reports whether the host's worker can take jobs now.
func (h *host) connected() bool { return h.exec != nil }

// hostNamed returns the host of that name, adding it when it is new
// (c.mu held).
func (c *Controller) hostNamed(name string) *host {
	h := c.hosts[name]
	if h == nil {
		_, closed := c.closedHosts[name]
		h = &host{name: name, lostAt: c.started, closed: closed}
		c.hosts[name] = h
		c.addHostName(name)
	}
	return h
}

// addHostName and dropHostName keep c.hostNames sorted as a host comes
// and goes, in O(N) rather than a sort of every name at each of 10,000
// registrations. The slice is replaced, never changed in place: a
// snapshot or a query may still hold the old one (c.mu held).
func (c *Controller) addHostName(name string) {
	i, found := slices.BinarySearch(c.hostNames, name)
	if !found {
		c.hostNames = slices.Concat(c.hostNames[:i:i], []string{name}, c.hostNames[i:])
	}
}

func (c *Controller) dropHostName(name string) {
	if i, found := slices.BinarySearch(c.hostNames, name); found {
		c.hostNames = slices.Concat(c.hostNames[:i:i], c.hostNames[i+1:])
	}
}

// dropHost forgets a host and its executor (c.mu held).
func (c *Controller) dropHost(name string) {
	delete(c.hosts, name)
	c.dropHostName(name)
	c.execs.Delete(name)
}

// configuredHosts lists every execution host of the configuration from
// the start, unavail until its worker registers, as LSF lists every host
// of lsf.cluster; a host the configuration no longer names goes when
// nothing ties it here (no worker, no job). Only a controller that takes
// remote workers has hosts besides its own (c.mu held, or before Run).
func (c *Controller) configuredHosts(conf *config.Config) {
	if !c.cfg.Workers {
		return
	}
	for name, hc := range conf.Hosts {
		if !hc.IsServer() {
			continue
		}
		if h := c.hostNamed(name); !h.local {
			h.slots = hc.Slots
			if h.attrs != nil && hc.Slots <= 0 {
				h.slots = registeredSlots(h.attrs) // as workerJoined counts them
			}
		}
	}
	busy := map[string]bool{}
	for _, r := range c.jobs {
		if !isFinished(r.job.State) {
			for _, es := range r.job.ExecHosts {
				busy[es.Host] = true
			}
		}
	}
	for name, h := range c.hosts {
		if hc := conf.Hosts[name]; (hc == nil || !hc.IsServer()) && !h.local && h.conn == nil && h.attrs == nil && !busy[name] {
			c.dropHost(name)
		}
	}
}

// checkHostList checks a job's host list (bsub -m, bmod -m): every term
// names a configured or known host, a host group, "all" or "others",
// each optionally with a "+N" preference (c.mu held).
func (c *Controller) checkHostList(conf *config.Config, list []string) error {
	for _, h := range list {
		name := hostlist.Name(h)
		if name != "others" && name != "all" && conf.Hosts[name] == nil && conf.HostGroups[name] == nil && c.hosts[name] == nil && conf.Templates[name] == nil {
			return userErr("%s: %s", h, errBadHost)
		}
	}
	return nil
}

// registeredSlots is a host's slots as its worker registered them: its
// --slots, else one per CPU.
func registeredSlots(reg *api.Host) int {
	if n := int(reg.GetMaxSlots()); n > 0 {
		return n
	}
	return max(1, int(reg.GetNcpus()))
}

// hostTakenError refuses a worker whose host name another connected
// worker holds.
type hostTakenError struct{ name, by string }

func (e *hostTakenError) Error() string {
	by := ""
	if e.by != "" {
		by = " from " + e.by
	}
	return fmt.Sprintf("host %s is already connected%s: another worker runs with this name (xced worker --name); stop it or give this one another name", e.name, by)
}

// firstHost is where a job's own process runs: its first execution host.
func firstHost(j *api.Job) string {
	if len(j.ExecHosts) > 0 {
		return j.ExecHosts[0].Host
	}
	return ""
}

// takeSlots charges (sign 1) or frees (sign -1) a job's slots on each of
// its hosts (c.mu held).
func (c *Controller) takeSlots(j *api.Job, exclusive bool, sign int) {
	for _, hs := range j.ExecHosts {
		h := c.hostNamed(hs.Host)
		h.used += sign * int(hs.Slots)
		if exclusive {
			h.exclusive = sign > 0
		}
	}
}

// execOf is the executor of a job's first host: its worker, or one that
// refuses while the worker is not connected. It needs no lock.
func (c *Controller) execOf(j *api.Job) Executor {
	name := firstHost(j)
	if name == "" {
		name = c.cfg.Host
	}
	if ex := c.taskExecutor(name); ex != nil {
		return ex
	}
	return offline{c, name}
}

// setExec makes a host's executor (nil: none) what execOf sees (c.mu
// held).
func (c *Controller) setExec(h *host, ex Executor) {
	h.exec = ex
	if ex == nil {
		c.execs.Delete(h.name)
	} else {
		c.execs.Store(h.name, ex)
	}
}

// offline is the executor of a host whose worker is not connected: a
// termination asked for meanwhile is remembered and sent when the worker
// is back (workerJoined), the rest waits for the worker's own report.
type offline struct {
	c    *Controller
	host string
}

var errAbsent = errors.New("the job's host is not connected")

func (offline) Start(*api.Job) error                       { return errAbsent }
func (offline) Reattach(*api.Job)                          {}
func (offline) NeverStarted(*api.Job) bool                 { return false }
func (offline) Signal(int64, int32, syscall.Signal) error  { return errAbsent }
func (offline) Usage(int64, int32) *api.ResourceUsage      { return nil }
func (offline) SetLimits(int64, int32, *api.JobSpec) error { return errAbsent }
func (offline) SpoolOutput(int64, int32) string            { return "" }
func (offline) Remove(int64, int32)                        {}

func (o offline) Terminate(id int64, idx int32, _ api.TermReason) error {
	o.c.killMu.Lock()
	defer o.c.killMu.Unlock()
	if o.c.kills == nil {
		o.c.kills = map[string]map[key]bool{}
	}
	if o.c.kills[o.host] == nil {
		o.c.kills[o.host] = map[key]bool{}
	}
	o.c.kills[o.host][key{id, idx}] = true
	return nil
}

// takeKills returns (and forgets) the terminations asked for while a
// host's worker was away.
func (c *Controller) takeKills(name string) map[key]bool {
	c.killMu.Lock()
	defer c.killMu.Unlock()
	k := c.kills[name]
	delete(c.kills, name)
	return k
}

// hostView is a host as the commands and the scheduler see it: its static
// attributes and, while its worker is connected, its load (c.mu held). A
// host whose worker is not connected advertises no capacity: only its
// name, type, model and slots stay.
func (c *Controller) hostView(h *host) *api.Host {
	conf := c.config()
	v := &api.Host{Name: h.name, MaxSlots: int32(h.slots), CpuFactor: hostCPUFactor}
	switch {
	case h.local:
		v.Ncpus, v.MaxmemKb = int32(c.cfg.NCPUs), c.cfg.MaxMemKB
		c.fillLoad(v)
		inv := c.cfg.GPUs.Latest()
		inv.Fill(v)
	case h.attrs != nil && h.connected():
		v = proto.Clone(h.attrs).(*api.Host)
		v.Name, v.MaxSlots = h.name, int32(h.slots)
		if v.CpuFactor == 0 {
			v.CpuFactor = hostCPUFactor
		}
	case h.attrs != nil:
		v.Type, v.Model, v.Ncpus = h.attrs.Type, h.attrs.Model, h.attrs.Ncpus
	default:
		// Configured (or known from a job) but not joined since this
		// controller started: nothing was detected, as LSF says of a host
		// whose LIM never reported.
		v.Type, v.Model = unknownAttr, unknownAttr
	}
	hc := conf.Hosts[h.name]
	if hc != nil && hc.CPUFactor > 0 {
		// The configured factor (lsf.shared HostModel) wins over the
		// worker's: it is what select[cpuf>...] was written against.
		v.CpuFactor = hc.CPUFactor
	}
	if v.Type == "" || (hc != nil && hc.Type != "") {
		v.Type = c.typeOf(h.name, v.Type)
	}
	if v.Model == "" || (hc != nil && hc.Model != "") {
		v.Model = c.modelOf(h.name, v.Model)
	}
	return v
}

// typeOf is a host's type: its host entry's in xce.toml, else what its
// worker detected (or this host's detected one).
func (c *Controller) typeOf(name, detected string) string {
	if hc := c.config().Hosts[name]; hc != nil && hc.Type != "" {
		return hc.Type
	}
	if detected != "" {
		return detected
	}
	return hostload.DetectedType()
}

func (c *Controller) modelOf(name, detected string) string {
	if hc := c.config().Hosts[name]; hc != nil && hc.Model != "" {
		return hc.Model
	}
	if detected != "" {
		return detected
	}
	return hostload.DetectedModel()
}

// unknownAttr is the type and model of a host whose worker has not
// registered, as LSF's lshosts prints them for a host it never heard from.
const unknownAttr = "UNKNOWN_AUTO_DETECT"

// hostStatus is a host's state as bhosts shows it (c.mu held). A host
// whose worker never joined is unavail (LSF: neither LIM nor sbatchd
// ever answered); one that joined and went is unreach until the grace.
func (c *Controller) hostStatus(h *host) (api.HostState, string) {
	switch {
	case !h.connected() && (h.unavail || h.attrs == nil && !h.local || c.pastGrace(h, time.Now())):
		return api.HostState_HOST_UNAVAIL, "unavail"
	case !h.connected():
		return api.HostState_HOST_UNREACH, "unreach"
	case h.closed:
		return api.HostState_HOST_CLOSED, "closed_Adm"
	case h.rcClosed:
		return api.HostState_HOST_CLOSED, "closed_RC"
	case h.drained:
		return api.HostState_HOST_CLOSED, drainStatus(h)
	case h.exclusive:
		return api.HostState_HOST_CLOSED, "closed_Excl"
	case h.used >= h.slots:
		return api.HostState_HOST_CLOSED, "closed_Full"
	}
	return api.HostState_HOST_OK, "ok"
}

// pastGrace reports whether a host's worker has been gone for the grace:
// bhosts shows it unavail from that moment, not from the next check of
// the hosts (checkHosts, on the loop's one-second tick and behind its
// cycles), which moves its jobs to UNKWN (c.mu held).
func (c *Controller) pastGrace(h *host, now time.Time) bool {
	if h.local || h.lostAt.IsZero() {
		return false
	}
	grace, _ := c.hostTimes()
	return now.Sub(h.lostAt) >= grace
}

// usable reports whether a job could start on the host now (c.mu held).
func (h *host) usable() bool {
	return h.connected() && !h.closed && !h.rcClosed && !h.drained && !h.exclusive && h.used < h.slots
}

// fullReason is why nothing can start when no host is usable: each
// host's cause with the number of hosts, as bjobs -p prints host-level
// reasons (c.mu held).
func (c *Controller) fullReason() string {
	counts := map[string]int{}
	var order []string
	for _, name := range c.hostNames {
		h := c.hosts[name]
		why := reasonSlotsText
		switch {
		case !h.connected():
			why = reasonUnreachText
		case h.closed:
			why = reasonHostAdmText
		case h.exclusive:
			why = reasonExclRunText
		}
		if counts[why] == 0 {
			order = append(order, why)
		}
		counts[why]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return counts[b] - counts[a] })
	out := ""
	for i, why := range order {
		if i > 0 {
			out += "\n"
		}
		out += hostCount(why, counts[why])
	}
	return out
}

// hostCount is "REASON: 1 host" or "REASON: N hosts".
func hostCount(why string, n int) string {
	if n == 1 {
		return why + ": 1 host"
	}
	return fmt.Sprintf("%s: %d hosts", why, n)
}

// Host-level pending reasons without their counts.
const (
	reasonSlotsText   = "Job slot limit reached"
	reasonHostAdmText = "Closed by LSF administrator"
	reasonExclRunText = "Running an exclusive job"
	reasonUnreachText = "Unable to reach slave batch server"
)

// WorkerJoined records a remote worker's registration: its host's
// attributes, and the jobs the store says run there, which the worker is
// asked to adopt when it does not watch them already (after a worker
// restart); jobs it watches that the controller does not place there (a
// rerun elsewhere, a job that ended) are terminated. It returns the
// name the host is known by.
func (c *Controller) workerJoined(conn *workerConn, reg *rpc.WorkerRegister) error {
	conf := c.config()
	name := conn.name
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.hosts[name]; h != nil && h.local {
		return fmt.Errorf("host %s is the controller's own host, whose jobs it runs itself", name)
	}
	if c.decommissioned[name] {
		return errDecommissioned{name}
	}
	h := c.hostNamed(name)
	if old := h.conn; old != nil {
		// Another worker holds the host's name: two agents started with
		// the same --name, or this one restarted before its old
		// connection was found dead (the keepalive ends it within
		// seconds, and the agent retries). The connected one keeps the
		// host; letting the newer win made two agents take it from each
		// other over and over.
		return &hostTakenError{name: name, by: old.peer}
	}
	h.conn = conn
	c.setExec(h, conn)
	h.attrs = proto.Clone(reg.Host).(*api.Host)
	h.slots = registeredSlots(reg.Host)
	if hc := conf.Hosts[name]; hc != nil && hc.Slots > 0 {
		h.slots = hc.Slots
	}
	h.lostAt, h.unavail = time.Time{}, false
	_, h.closed = c.closedHosts[name]
	c.rcJoined(h, reg.InstanceId)
	cl := &conf.Cluster
	elimDir, elimStale, elimRes := c.elimWelcome(name)
	conn.send(&rpc.ControllerMessage{Msg: &rpc.ControllerMessage_Welcome{Welcome: &rpc.Welcome{
		ClusterName: cl.Name, Host: name,
		KillGraceMs:         c.cfg.KillGrace.Milliseconds(),
		TerminateIntervalMs: c.terminateInterval().Milliseconds(),
		MemlimitEnforce:     cl.MemlimitEnforce, JobMemlimit: cl.JobMemlimit, StdoutDirect: cl.StdoutDirect,
		ClusterAdmin: PrimaryAdmin(conf),
		ElimDir:      elimDir, ElimStaleAfterMs: elimStale, ElimResources: elimRes,
	}}})
	watched := map[key]bool{}
	for _, ref := range reg.Running {
		watched[key{ref.JobId, ref.ArrayIndex}] = true
	}
	kills := c.takeKills(name)
	var changes []store.Change
	here := map[key]bool{}
	for _, r := range c.jobsOn(name) {
		k := key{r.job.JobId, r.job.ArrayIndex}
		here[k] = true
		if !watched[k] {
			conn.Reattach(proto.Clone(r.job).(*api.Job))
		}
		c.rejoinLimits(conn, r) // rsvend.go
		if kills[k] {
			conn.Terminate(k.id, k.idx, termReasonOf(r.job))
		}
		if r.job.State == api.JobState_UNKWN {
			nj := c.clone(r)
			nj.State = r.job.PrevState
			if !isRunning(nj.State) || nj.State == api.JobState_UNKWN {
				nj.State = api.JobState_RUN
			}
			changes = append(changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_HOST_STATUS, "", fmt.Sprintf(detailBack, name))})
		}
	}
	// Instances that are not this host's jobs any more (rerun elsewhere
	// or ended after the host failed, c.stale; or any the worker still
	// watches): whatever is left of them here goes. One the worker does
	// not watch (it restarted) is adopted first, by its own record.
	stale := c.stale[name]
	if stale == nil {
		stale = map[key]bool{}
	}
	for k := range watched {
		if !here[k] {
			stale[k] = true
		}
	}
	for k := range stale {
		if here[k] {
			delete(stale, k)
			continue
		}
		slog.Warn("terminating a job instance its host no longer runs", "host", name, "job", k.id, "index", k.idx)
		if !watched[k] {
			conn.Reattach(&api.Job{JobId: k.id, ArrayIndex: k.idx, State: api.JobState_RUN})
		}
		conn.Terminate(k.id, k.idx, api.TermReason_TERM_UNKNOWN)
	}
	c.setStale(name, stale)
	if err := c.commit(changes); err != nil {
		slog.Error("record host's return", "host", name, "err", err)
	}
	c.Kick()
	return nil
}

// workerLeft records that a remote worker's connection ended.
func (c *Controller) workerLeft(conn *workerConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.hosts[conn.name]; h != nil && h.conn == conn {
		h.conn = nil
		c.setExec(h, nil)
		h.lostAt = time.Now()
	}
}

// hostLoaded records a remote worker's load sample.
func (c *Controller) hostLoaded(conn *workerConn, load *api.Host) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[conn.name]
	if h == nil || h.conn != conn || h.attrs == nil {
		return
	}
	copyLoad(h.attrs, load)
}

// copyLoad copies the load indices of a sample into a host.
func copyLoad(dst, src *api.Host) {
	dst.R15S, dst.R1M, dst.R15M, dst.Ut = src.R15S, src.R1M, src.R15M, src.Ut
	dst.MemKb, dst.SwpKb, dst.TmpKb, dst.LoadMeasured = src.MemKb, src.SwpKb, src.TmpKb, src.LoadMeasured
	dst.Pg, dst.Io, dst.Ls, dst.It = src.Pg, src.Io, src.Ls, src.It
	if src.MaxswpKb > 0 {
		dst.MaxswpKb = src.MaxswpKb
	}
	if src.MaxtmpKb > 0 {
		dst.MaxtmpKb = src.MaxtmpKb
	}
	dst.Ngpus, dst.Gpus, dst.GpuDriver = src.Ngpus, src.Gpus, src.GpuDriver
	dst.ElimValues = src.ElimValues
}

// hostTimes are the cluster's failure timers: how long a host may be out
// of touch before it is unavail (its jobs UNKWN), and before its jobs are
// given up on (rerunnable ones requeued, the others ended).
func (c *Controller) hostTimes() (grace, failure time.Duration) {
	cl := &c.config().Cluster
	return time.Duration(cl.HostUnavailGrace) * time.Second, time.Duration(cl.HostFailureTimeout) * time.Second
}

// Host-failure texts of bjobs -l and bhist.
const (
	detailUnknown = "the execution host %s is unavailable: the job's state is unknown"
	detailBack    = "the execution host %s is back: the job runs"
	detailRerun   = "Job has been requeued: its execution host %s failed"
	detailHung    = "Job removed: its execution host %s failed"
)

// checkHosts moves hosts whose worker has been gone past the grace to
// unavail (their jobs UNKWN), and past the failure timeout gives up on
// their jobs: rerunnable ones go back to pending, to run elsewhere, the
// others end EXIT (TERM_REMOVE_HUNG_JOB). Called from Run's loop.
func (c *Controller) checkHosts(now time.Time) {
	grace, failure := c.hostTimes()
	c.mu.Lock()
	defer c.mu.Unlock()
	var changes []store.Change
	for _, name := range c.hostNames {
		h := c.hosts[name]
		if h.connected() || h.local || h.lostAt.IsZero() {
			continue
		}
		gone := now.Sub(h.lostAt)
		if gone >= grace && !h.unavail {
			h.unavail = true
			slog.Warn("host unavailable", "host", name, "gone", gone.Round(time.Second))
			for _, r := range c.jobsOn(name) {
				if r.job.State == api.JobState_UNKWN {
					continue
				}
				nj := c.clone(r)
				nj.PrevState = r.job.State
				nj.State = api.JobState_UNKWN
				changes = append(changes, store.Change{Job: nj, Event: c.event(nj, api.EventType_HOST_STATUS, "", fmt.Sprintf(detailUnknown, name))})
			}
		}
		if failure > 0 && gone >= failure {
			for _, r := range c.jobsOn(name) {
				changes = append(changes, c.hostFailed(r, name, now))
			}
		}
	}
	more, gangActs := c.gangFailures(changes) // gang.go
	changes = append(changes, more...)
	if err := c.commit(changes); err != nil {
		slog.Error("record host failure", "err", err)
		return
	}
	go sendGangActs(gangActs) // c.mu is held: a worker's stream may block
}

// jobsOn lists the running jobs whose first host is name (c.mu held).
func (c *Controller) jobsOn(name string) []*rec {
	var out []*rec
	for _, r := range c.running {
		if firstHost(r.job) == name {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *rec) int {
		if a.job.JobId != b.job.JobId {
			return int(a.job.JobId - b.job.JobId)
		}
		return int(a.job.ArrayIndex - b.job.ArrayIndex)
	})
	return out
}

// hostFailed gives up on a job whose host failed (c.mu held). What may
// still run of it there is terminated when the host returns.
func (c *Controller) hostFailed(r *rec, name string, now time.Time) store.Change {
	if c.stale == nil {
		c.stale = map[string]map[key]bool{}
	}
	if c.stale[name] == nil {
		c.stale[name] = map[key]bool{}
	}
	c.stale[name][key{r.job.JobId, r.job.ArrayIndex}] = true
	c.noteStaleCores(name, r)
	nj := c.clone(r)
	if r.eff.GetRerunnable() {
		requeued(nj, false)
		nj.Reruns++
		return store.Change{Job: nj, Event: c.event(nj, api.EventType_PEND_AGAIN, "", fmt.Sprintf(detailRerun, name))}
	}
	nj.State = api.JobState_EXIT
	nj.EndTime = now.UnixNano()
	nj.ExitStatus = 0
	nj.TermReason, nj.TermReasonSet = api.TermReason_TERM_REMOVE_HUNG_JOB, true
	ev := c.event(nj, api.EventType_FINISH, "", fmt.Sprintf(detailHung, name))
	ev.TermReason = nj.TermReason
	return store.Change{Job: nj, Event: ev}
}

// schedHost is a host as lib/sched reads it (c.mu held): its status, its
// slots, and the values select[], order[] and rusage[] see. A host whose
// worker is not connected advertises no capacity (DESIGN.md): only its
// name, type, model and configured resources stay.
func (c *Controller) schedHost(h *host, schema *resreq.Schema) sched.Host {
	conf := c.config()
	values := schema.NewHost()
	v := c.hostView(h)
	set := func(name string, val any) {
		if n, ok := val.(int64); ok { // TOML integers
			val = float64(n)
		}
		schema.Set(values, name, val)
	}
	status := sched.HostOK
	switch {
	case !h.connected():
		status = sched.HostUnavail
	case h.closed, h.rcClosed, h.drained:
		status = sched.HostClosed
	}
	if h.connected() {
		set("mem", float64(v.MemKb)/1024)
		set("swp", float64(v.SwpKb)/1024)
		set("maxmem", float64(v.MaxmemKb)/1024)
		set("maxswp", float64(v.MaxswpKb)/1024)
		set("r15s", v.R15S)
		set("r1m", v.R1M)
		set("r15m", v.R15M)
		set("ncpus", float64(v.Ncpus))
		set("ut", v.Ut)
		set("cpuf", v.CpuFactor)
		for name, x := range map[string]float64{"tmp": float64(v.TmpKb) / 1024, "maxtmp": float64(v.MaxtmpKb) / 1024,
			"nprocs": float64(v.Nprocs), "ncores": float64(v.Ncores), "nthreads": float64(v.Nthreads)} {
			if x > 0 {
				set(name, x)
			}
		}
	}
	var gpus []sched.GPU
	if h.connected() {
		inv := gpu.FromAPI(v)
		gpus = gpu.SchedGPUs(inv.Devices)
		if err := gpu.SetHost(schema, values, append(inv.Static(), inv.Load()...)); err != nil {
			slog.Warn("GPU resources", "host", h.name, "err", err)
		}
	}
	set("type", v.Type)
	set("model", v.Model)
	set("hname", h.name)
	if hc := conf.Hosts[h.name]; hc != nil {
		for _, a := range hc.Attributes {
			set(a, true)
		}
		for name, x := range hc.Resources {
			set(name, x)
		}
	}
	if h.connected() {
		setElimValues(conf, schema, values, v)
	}
	c.setTemplateValues(h, schema, values)
	var cpus []int
	if h.connected() {
		cpus = c.withoutStaleCores(h.name, hostCores(conf, h.name, v.Ncpus))
	}
	return withInstances(conf, schema, sched.Host{Name: h.name, Status: status, MaxSlots: h.slots, Values: values, GPUs: gpus, CPUs: cpus},
		v, h.connected())
}

// addGPUJob lists a running or suspended job on the host's devices it
// holds (bhosts -l -gpu's job IDs).
func addGPUJob(h *api.Host, j *api.Job, es *api.HostSlots) {
	if !isRunning(j.State) {
		return
	}
	for _, d := range es.Gpus {
		for _, g := range h.Gpus {
			if g.Index == d {
				g.JobIds = append(g.JobIds, jobName(j.JobId, j.ArrayIndex))
				if j.State == api.JobState_SSUSP || j.State == api.JobState_USUSP {
					g.SuspJobIds = append(g.SuspJobIds, jobName(j.JobId, j.ArrayIndex))
				}
			}
		}
	}
}

// fillGPUUse sets what the running jobs hold of each of the host's
// devices, as the scheduler accounts it (bhosts -gpu).
func fillGPUUse(h *api.Host, hv sched.HostView) {
	for _, u := range hv.GPUs {
		for _, g := range h.Gpus {
			if int(g.Index) == u.Index {
				g.Njobs, g.Exclusive, g.MemRsvMb = int32(u.Jobs), u.Exclusive, u.MemRsv
			}
		}
	}
	byNumber := func(a, b string) int { // 9 before 10
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	}
	for _, g := range h.Gpus {
		slices.SortFunc(g.JobIds, byNumber)
		slices.SortFunc(g.SuspJobIds, byNumber)
	}
}

// staleHosts is "~HOST" for each host where an old instance of the job
// still runs (c.mu held); nil when there is none.
//
// c.stale holds only hosts with such instances (setStale): it is walked
// for every running job of every snapshot.
func (c *Controller) staleHosts(k key) []string {
	var out []string
	for name, st := range c.stale {
		if st[k] {
			out = append(out, "~"+name)
		}
	}
	return out
}

// setStale records a host's stale instances; none removes its entry
// (c.mu held).
func (c *Controller) setStale(name string, stale map[key]bool) {
	if len(stale) == 0 {
		delete(c.stale, name)
		return
	}
	if c.stale == nil {
		c.stale = map[string]map[key]bool{}
	}
	c.stale[name] = stale
}

// PrimaryAdmin is the cluster's primary administrator, whom job reports
// and job mail name as their sender: the first administrator the
// configuration names, else the user the controller runs as (always an
// administrator).
func PrimaryAdmin(conf *config.Config) string {
	if a := conf.PrimaryAdmin(); a != "" {
		return a
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
