package worker

// Containment: each job in a cgroup of its own (lib/cgroup).
//
// Where the worker can make cgroups (root, a writable cgroup file
// system, process tracking not turned off), every job gets
// xce/<cluster>/job.ID.IDX, made before its shepherd is let go: the
// shepherd is moved in while it still waits for its go, so the job and
// everything it starts are born inside, whatever they do to their
// process group or session. From then on the worker, not the shepherd,
// is the authority:
//
//   - bstop (SIGSTOP, SIGTSTP) freezes the whole cgroup and bresume
//     (SIGCONT) thaws it; every other signal goes to every process in it
//     but the shepherd (which passes SIGINT and SIGTERM on itself);
//   - at the job's end (its shepherd gone) everything left is killed and
//     the cgroup removed;
//   - CPU time and peak memory are the cgroup's (cgroup_acct), so a peak
//     between two samples counts, and a stopped or lying shepherd cannot
//     change them;
//   - the run limit and termination deadline are enforced by the worker
//     too, a little after the shepherd should have (so a stopped or
//     killed shepherd changes nothing): it kills the cgroup and ends the
//     job TERM_RUNLIMIT (TERM_DEADLINE);
//   - with memory enforced the cgroup's limit is the job's (times its
//     slots on the host; bmod -M changes it, limits.go), and a job whose
//     cgroup saw the kernel's OOM kill ends TERM_MEMLIMIT; a memory limit
//     LSF enforces by sampling instead (memlimit_enforce, job_memlimit,
//     -M N!) is backed by the worker from the cgroup's resident memory
//     (memlimit.go).
//
// A blaunch task joins its job's cgroup on its host (made for it where
// the job's shepherd runs elsewhere), before its command runs: the task's
// subreaper waits for a go on descriptor 3 (exec.TaskGateEnv).
//
// Where the worker cannot make cgroups it says so once, at start, and
// runs as before: the shepherd's process group and subreaper tree.

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/api/rpc"
	"xce/lib/cgroup"
	jobexec "xce/lib/exec"
)

// CgroupParentEnv names the cgroup under which xce/ lives, from each
// hierarchy's root, when it is not the worker's own cgroup.
const CgroupParentEnv = "XCE_CGROUP_PARENT"

// backstop is how long after the shepherd should have ended a job for its
// run limit (limit plus kill grace) the worker ends it itself.
const backstop = 3 * time.Second

// openCgroups finds out whether the worker can make cgroups, and says
// once which mode it runs in and why.
func openCgroups(cfg Config) *cgroup.Manager {
	if cfg.NoProcessTracking {
		slog.Info("job containment: process tree (the shepherd's process group and subreaper)",
			"why", "process_tracking is off")
		return nil
	}
	m, err := cgroup.New(cgroup.Config{Cluster: cfg.ClusterName, Parent: cmpOr(cfg.CgroupParent, os.Getenv(CgroupParentEnv))})
	if err != nil {
		slog.Warn("job containment: process tree (the shepherd's process group and subreaper); jobs are not in cgroups",
			"why", err.Error())
		return nil
	}
	slog.Info("job containment: a cgroup per job", "cgroups", m.String())
	return m
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Containment says how the worker contains jobs: "cgroup" or "process
// tree".
func (w *Worker) Containment() string {
	if w.cg != nil {
		return "cgroup"
	}
	return "process tree"
}

// containment is the job's Launch.containment: the controller's, or the
// defaults (tracked and measured where the worker can; nothing enforced).
func (w *Worker) containment(job *api.Job) *api.Containment {
	// The controller's word for this host (the cluster's settings with
	// the host's overrides), kept with the job.
	for _, hs := range job.GetExecHosts() {
		if hs.GetHost() == w.cfg.Host && hs.GetContainment() != nil {
			return hs.GetContainment()
		}
	}
	if w.cfg.Containment != nil {
		if c := w.cfg.Containment(job); c != nil {
			return c
		}
	}
	return &api.Containment{ProcessTracking: true, CgroupAcct: true}
}

// startCgroup makes the job's cgroup (makeCgroup) in the background and
// returns the wait for it.
func (w *Worker) startCgroup(k jobKey, job *api.Job, c *api.Containment) func() cgroup.Job {
	if w.cg == nil || !c.GetProcessTracking() {
		return func() cgroup.Job { return nil }
	}
	ch := make(chan cgroup.Job, 1)
	go func() {
		w.waitRemoved(k)
		t0 := time.Now()
		cg := w.makeCgroup(job, c)
		traceStep("cgroup-create", t0)
		ch <- cg
	}()
	return func() cgroup.Job { return <-ch }
}

// makeCgroup makes the job's cgroup with the limits c enforces; nil when
// the job runs without one (said in the log).
func (w *Worker) makeCgroup(job *api.Job, c *api.Containment) cgroup.Job {
	if w.cg == nil || !c.GetProcessTracking() {
		return nil
	}
	var cpus, gpus []int32
	for _, hs := range job.GetExecHosts() {
		if hs.GetHost() == w.cfg.Host {
			cpus, gpus = hs.GetCpus(), hs.GetGpus()
		}
	}
	j, err := w.cg.Create(job.JobId, job.ArrayIndex, w.cgroupLimits(job.JobId, job.ArrayIndex, c, cpus, gpus))
	if err != nil {
		slog.Warn("the job runs without a cgroup (process tree only)", "job", job.JobId, "index", job.ArrayIndex, "err", err)
		return nil
	}
	return j
}

// cgroupLimits is what the kernel enforces for a job on this host, as c says:
// its memory limit, its cores (cpus) and its GPUs (gpus, by index).
func (w *Worker) cgroupLimits(id int64, idx int32, c *api.Containment, cpus, gpus []int32) cgroup.Limits {
	var lim cgroup.Limits
	enforce := c.GetResourceEnforce()
	if slices.Contains(enforce, "memory") && c.GetMemLimitKb() > 0 {
		lim.MemKB = c.GetMemLimitKb()
	}
	if slices.Contains(enforce, "cpu") {
		for _, cpu := range cpus {
			lim.CPUs = append(lim.CPUs, int(cpu))
		}
	}
	if slices.Contains(enforce, "gpu") {
		ids := make([]int, len(gpus))
		for i, g := range gpus {
			ids[i] = int(g)
		}
		lim.DenyDevices = cgroup.GPUDeviceRules(w.cfg.DevDir, ids)
	}
	for _, kind := range enforce {
		if !w.cg.CanEnforce(kind) {
			slog.Warn("cannot enforce a limit here: no controller for it", "job", id, "index", idx, "limit", kind)
		}
	}
	return lim
}

// cgSignal delivers sig to a job in a cgroup: stop and continue freeze and
// thaw it whole; others reach every process but the shepherd.
func (w *Worker) cgSignal(p *proc, sig syscall.Signal) error {
	switch sig {
	case syscall.SIGSTOP, syscall.SIGTSTP:
		return p.cg.Freeze()
	case syscall.SIGCONT:
		err := p.cg.Thaw()
		// A process the job stopped itself is continued as before.
		p.cg.Signal(syscall.SIGCONT, p.shepherd)
		return err
	}
	_, err := p.cg.Signal(sig, p.shepherd)
	return err
}

// watchLimits is the worker's own run limit and deadline of a job in a
// cgroup: backstop after the shepherd should have ended it, the worker
// kills the cgroup (the shepherd with it) and ends the job for that
// reason. A new limit (bmod) re-arms it.
func (w *Worker) watchLimits(k jobKey, p *proc, spec *api.JobSpec, start time.Time) {
	grace := w.cfg.KillGrace
	if grace <= 0 {
		grace = 10 * time.Minute
	}
	for {
		w.mu.Lock()
		runSec, termTime, reset := p.runSec, p.termTime, p.limitsChanged
		w.mu.Unlock()
		var at time.Time
		reason := api.TermReason_TERM_RUNLIMIT
		if runSec > 0 {
			at = start.Add(time.Duration(runSec) * time.Second)
		}
		if termTime > 0 && (at.IsZero() || time.Unix(termTime, 0).Before(at)) {
			at, reason = time.Unix(termTime, 0), api.TermReason_TERM_DEADLINE
		}
		var fire <-chan time.Time
		if !at.IsZero() {
			t := time.NewTimer(time.Until(at.Add(grace + backstop)))
			defer t.Stop()
			fire = t.C
		}
		select {
		case <-p.ended:
			return
		case <-reset:
			continue
		case <-fire:
		}
		w.mu.Lock()
		if w.jobs[k] != p {
			w.mu.Unlock()
			return
		}
		p.enforced = reason
		w.mu.Unlock()
		slog.Warn("the job outlived its limit and its shepherd did not end it: the worker kills its cgroup",
			"job", k.id, "index", k.idx, "reason", reason.String())
		if err := p.cg.Kill(); err != nil {
			slog.Warn("kill the job's cgroup", "job", k.id, "index", k.idx, "err", err)
		}
		// The shepherd, killed with the cgroup, ends the job (finish).
		return
	}
}

// cgFinish is the end of a job in a cgroup: its usage is read, whatever
// is left is killed and the cgroup removed; ev (the shepherd's record,
// or nil when it left none) is corrected with what the worker knows.
//
// Only what the end needs is done before it is reported: what is left
// in the cgroup is killed first, but the empty cgroup is removed after
// (removeLater).
func (w *Worker) cgFinish(k jobKey, p *proc, ev *api.Event) *api.Event {
	t0 := time.Now()
	u, uerr := p.cg.EndUsage()
	traceStep("cgroup-end-usage", t0)
	t0 = time.Now()
	if left, err := p.cg.Pids(); err != nil || len(left) > 0 {
		if err := p.cg.Kill(); err != nil {
			slog.Warn("what is left of the job could not be killed", "job", k.id, "index", k.idx, "cgroup", p.cg.Path(), "err", err)
		}
	}
	traceStep("cgroup-kill-left", t0)
	w.removeLater(k, p.cg)
	if uerr != nil {
		slog.Warn("the job's cgroup could not be read", "job", k.id, "index", k.idx, "err", uerr)
	}
	w.mu.Lock()
	enforced, acct, mem := p.enforced, p.acct, p.memEnforced
	w.mu.Unlock()
	switch {
	case enforced != api.TermReason_TERM_UNKNOWN && (ev == nil || ev.TermReason == api.TermReason_TERM_UNKNOWN):
		ev = killedEvent(ev, enforced, "%s: the worker ended the job at its limit (its shepherd had not)", enforced)
	case uerr == nil && mem && u.OOMKills > 0 && (ev == nil || ev.TermReason == api.TermReason_TERM_UNKNOWN) &&
		(ev == nil || ev.ExitStatus != 0):
		ev = killedEvent(ev, api.TermReason_TERM_MEMLIMIT, "%s: the job's cgroup reached its memory limit; the kernel killed %d of its processes", api.TermReason_TERM_MEMLIMIT, u.OOMKills)
	}
	if ev != nil && acct && uerr == nil {
		w.mu.Lock()
		own := p.shepherdCPU
		w.mu.Unlock()
		cgUsage(ev, u, own)
	}
	return ev
}

// killedEvent is the end of a job the worker (or the kernel) killed for
// reason: the shepherd's record where it left one, else a SIGKILL end.
func killedEvent(ev *api.Event, reason api.TermReason, format string, args ...any) *api.Event {
	if ev == nil {
		ev = &api.Event{
			Type:       api.EventType_FINISH,
			State:      api.JobState_EXIT,
			Time:       time.Now().UnixNano(),
			ExitStatus: 128 + int32(syscall.SIGKILL),
			Signal:     int32(syscall.SIGKILL),
		}
	}
	ev.TermReason = reason
	if ev.State == api.JobState_DONE {
		ev.State = api.JobState_EXIT
	}
	d := fmt.Sprintf(format, args...)
	if ev.Detail != "" {
		d += "; " + ev.Detail
	}
	ev.Detail = d
	return ev
}

// cgUsage lays the cgroup's measures over an end's usage; own is the
// shepherd's own CPU time, last seen.
func cgUsage(ev *api.Event, u cgroup.Usage, own time.Duration) {
	if ev.Usage == nil {
		ev.Usage = &api.ResourceUsage{}
	}
	applyUsage(ev.Usage, u, 0, own)
	ev.CpuTimeMs = ev.Usage.CpuTimeMs
}

// applyUsage lays the cgroup's CPU time, memory and processes (but the
// shepherd's: its pid, and own, its own CPU time) over a usage sample.
// The shepherd shares the job's cgroup (the job starts inside it), but
// its CPU is not the job's: a job that sleeps has an idle factor of 0.
func applyUsage(r *api.ResourceUsage, u cgroup.Usage, shepherd int, own time.Duration) {
	r.CpuTimeMs = max(r.CpuTimeMs, max(u.CPUTime-own, 0).Milliseconds())
	if u.MaxBytes > 0 {
		r.MaxMemKb = max(r.MaxMemKb, u.MaxBytes>>10)
	}
	if u.MemBytes > 0 {
		r.MemKb = u.MemBytes >> 10
	}
	if shepherd > 0 {
		var pids []int32
		for _, pid := range u.Pids {
			if pid != shepherd {
				pids = append(pids, int32(pid))
			}
		}
		r.Pids = pids
		r.Nprocs = int32(len(pids))
	}
}

// cgUsageNow is a running job's usage read from its cgroup, over the
// shepherd's latest sample u (nil when it has none).
func (w *Worker) cgUsageNow(p *proc, u *api.ResourceUsage) *api.ResourceUsage {
	cu, err := p.cg.Usage()
	if err != nil {
		return u
	}
	if u == nil {
		u = &api.ResourceUsage{}
	}
	applyUsage(u, cu, p.shepherd, w.noteShepherdCPU(p))
	return u
}

// noteShepherdCPU reads the shepherd's own CPU time (user and system, not
// its children's) while it runs, and returns the latest seen: the
// worker's child, its pid is not reused before the worker reaps it.
func (w *Worker) noteShepherdCPU(p *proc) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d, ok := ownCPU(p.shepherd); ok {
		p.shepherdCPU = max(p.shepherdCPU, d-p.shepherdBase)
	}
	return p.shepherdCPU
}

// ownCPU is a process's own CPU time (utime + stime of /proc/PID/stat,
// in USER_HZ ticks of 10 ms).
func ownCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis: state is the
	// first (field 3), utime the 12th (14), stime the 13th (15).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// runLimits reads the run limit the worker keeps for a job in a cgroup.
func runLimits(job *api.Job) *api.JobSpec {
	return jobexec.MergedSpec(job)
}

// taskCgroup is the cgroup a task of ts's job joins on this host: the
// job's own where its shepherd runs here (local), else one made for the
// job's tasks here, removed when the job ends (endTaskCgroup).
func (w *Worker) taskCgroup(ts *rpc.TaskStart) (cg cgroup.Job, local bool) {
	if w.cg == nil || len(w.cfg.Shepherd) == 0 {
		return nil, false
	}
	k := jobKey{ts.JobId, ts.Index}
	w.mu.Lock()
	p := w.jobs[k]
	w.mu.Unlock()
	if p != nil && p.cg != nil {
		return p.cg, true
	}
	if p != nil {
		return nil, false // the job runs here without one
	}
	w.tmu.Lock()
	defer w.tmu.Unlock()
	t := w.taskTable()
	if t.cgroups == nil {
		t.cgroups = map[jobKey]cgroup.Job{}
	}
	if cg := t.cgroups[k]; cg != nil {
		return cg, false
	}
	w.waitRemoved(k)
	if cg := w.cg.Load(ts.JobId, ts.Index); cg != nil {
		// Another worker's on this machine (tests run several): joined,
		// never removed from here.
		return cg, false
	}
	c := ts.GetContainment()
	if c == nil {
		c = &api.Containment{ProcessTracking: true, CgroupAcct: true}
	}
	if !c.GetProcessTracking() {
		return nil, false
	}
	// GPUs are given to a job's own hosts' shepherds only; a task here
	// has no devices of its own to limit it to.
	cg, err := w.cg.Create(ts.JobId, ts.Index, w.cgroupLimits(ts.JobId, ts.Index, c, ts.GetCpus(), nil))
	if err != nil {
		slog.Warn("the job's tasks here run without a cgroup", "job", ts.JobId, "index", ts.Index, "err", err)
		return nil, false
	}
	t.cgroups[k] = cg
	return cg, false
}

// endIdleTaskCgroup removes the cgroup made here for a job's tasks once
// none of them runs here.
func (w *Worker) endIdleTaskCgroup(k jobKey) {
	w.tmu.Lock()
	t := w.taskTable()
	for tk := range t.running {
		if tk.job == k {
			w.tmu.Unlock()
			return
		}
	}
	w.tmu.Unlock()
	w.endTaskCgroup(k)
}

// endTaskCgroup kills and removes the cgroup made here for a job's tasks.
func (w *Worker) endTaskCgroup(k jobKey) {
	w.tmu.Lock()
	t := w.taskTable()
	cg := t.cgroups[k]
	delete(t.cgroups, k)
	w.tmu.Unlock()
	if cg != nil {
		if err := cg.Remove(); err != nil {
			slog.Warn("the job's task cgroup could not be removed", "job", k.id, "index", k.idx, "err", err)
		}
	}
}

// Close lets the idle shepherds go and gives back what the worker made for
// containment: the empty xce/<cluster> directories of its cgroup
// hierarchies.
func (w *Worker) Close() {
	w.closeIdle()
	w.rm.wg.Wait()
	if w.cg != nil {
		w.cg.Close()
	}
}
