package worker

import (
	"log/slog"
	"slices"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/cgroup"
)

// cpuCheckInterval is how often the worker reads a CPU-limited job's
// cgroup: the shepherd's sampling interval.
const cpuCheckInterval = time.Second

// watchCPULimit enforces a job's CPU-time limit (-c, CPULIMIT; sec > 0)
// from its cgroup's CPU time when the cgroup measures the job
// (cgroup_acct): every process the job ever ran counts, also those that
// left its process tree, and neither a stopped shepherd nor a lying one
// changes it. Over the limit the job ends as LSF ends it (SIGXCPU, then
// SIGINT, SIGTERM and SIGKILL) with TERM_CPULIMIT. A new limit (bmod)
// replaces the old; one watch runs per job.
func (w *Worker) watchCPULimit(k jobKey, p *proc, sec int64) {
	if p.cg == nil {
		return
	}
	w.mu.Lock()
	p.cpuSec = sec
	start := p.acct && sec > 0 && !p.cpuWatch
	if start {
		p.cpuWatch = true
	}
	w.mu.Unlock()
	if !start {
		return
	}
	go func() {
		t := time.NewTicker(cpuCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-p.ended:
				return
			case <-t.C:
			}
			w.mu.Lock()
			lim := time.Duration(p.cpuSec) * time.Second
			w.mu.Unlock()
			if lim <= 0 {
				continue
			}
			cpu, err := p.cg.CPUTime()
			if err != nil {
				continue
			}
			// The shepherd shares the cgroup; its own CPU is not the job's.
			used := cpu - w.noteShepherdCPU(p)
			if used <= lim {
				continue
			}
			if !w.markLimit(k, p, api.TermReason_TERM_CPULIMIT) {
				return
			}
			slog.Info("the job reached its CPU time limit (its cgroup's CPU time): the worker ends it",
				"job", k.id, "index", k.idx, "cpu", used.Round(time.Millisecond), "limit", lim)
			w.terminate(k.id, k.idx, api.TermReason_TERM_CPULIMIT,
				syscall.SIGXCPU, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL)
			// The sequence spares the shepherd; one that was stopped
			// would never report the end: backstop after it, the whole
			// cgroup is killed, as for the run limit (watchLimits).
			select {
			case <-p.ended:
			case <-time.After(3*w.cfg.TerminateInterval + backstop):
				slog.Warn("the job outlived its CPU limit's termination: the worker kills its cgroup", "job", k.id, "index", k.idx)
				if err := p.cg.Kill(); err != nil {
					slog.Warn("kill the job's cgroup", "job", k.id, "index", k.idx, "err", err)
				}
			}
			return
		}
	}()
}

// adoptedContainment is what a restarted worker keeps of the containment
// of a job it adopts with its cgroup cg: whether the cgroup measures it,
// whether its memory limit is enforced there, and whether the cgroup
// holds the job's memory limit (bmod -M changes it there). The limit the
// cgroup was made with holds whatever the job's record says, so an OOM
// kill under it is the job's memory limit (TERM_MEMLIMIT) either way.
func (w *Worker) adoptedContainment(job *api.Job, cg cgroup.Job) (acct, memEnforced, kernelMem bool) {
	c := w.containment(job)
	lim, err := cg.MemLimit()
	memEnforced = err == nil && lim > 0 ||
		slices.Contains(c.GetResourceEnforce(), "memory") && c.GetMemLimitKb() > 0
	kernelMem = w.kernelMemory(c, cg) || err == nil && lim > 0
	return c.GetCgroupAcct(), memEnforced, kernelMem
}
