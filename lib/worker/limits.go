package worker

// A running job's new limits (bmod -W, -M, -c), and the memory limit its
// cgroup holds.

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"xce/lib/api"
	"xce/lib/atomicfile"
	"xce/lib/cgroup"
	jobexec "xce/lib/exec"
)

// SetLimits gives a running job new run, memory and CPU limits (bmod)
// and termination deadline (a closed advance reservation's new end): they
// go to the limits file the shepherd reads (exec.LimitsFile) when it
// gets SIGUSR1. The file is root's, in the job's root-owned directory, and
// readable by all: the shepherd runs as the job's user.
//
// The controller records a dispatch (the job is RUN from then on) and
// launches it after, and a remote worker may even get the limits before
// the start: limits for a job this worker does not run yet are kept, and
// given to it once Start has its shepherd (a bmod -W of a job that had
// just been dispatched was lost, and the job ran on with its old limits).
func (w *Worker) SetLimits(id int64, idx int32, limits *api.JobSpec) error {
	k := jobKey{id, idx}
	w.mu.Lock()
	p := w.jobs[k]
	if p == nil {
		if w.limitsPending == nil {
			w.limitsPending = map[jobKey]*api.JobSpec{}
		}
		w.limitsPending[k] = limits
		w.mu.Unlock()
		return nil
	}
	shepherd, uid := p.shepherd, p.uid
	w.mu.Unlock()
	if shepherd <= 0 {
		return fmt.Errorf("job %d[%d] is not running on this host", id, idx)
	}
	if p.cg != nil {
		w.mu.Lock()
		p.runSec, p.termTime = limits.GetRunLimitSec(), limits.GetTermTime()
		// A job adopted without its spec (a restarted worker) has no
		// backstop yet: its first limits arm it.
		arm := p.limitsChanged == nil && p.ended != nil
		if arm {
			p.limitsChanged = make(chan struct{}, 1)
		}
		w.mu.Unlock()
		if arm {
			go w.watchLimits(k, p, limits, time.Unix(0, p.since))
		}
		select {
		case p.limitsChanged <- struct{}{}:
		default:
		}
		w.watchCPULimit(k, p, limits.GetCpuLimitSec())
		w.watchMemLimit(k, p, limits.GetMemLimitKb(), limits.GetMemLimitHard())
		w.setCgroupMemLimit(k, p, limits.GetMemLimitKb())
	}
	b, err := api.Marshal(&api.JobSpec{RunLimitSec: limits.GetRunLimitSec(), MemLimitKb: limits.GetMemLimitKb(),
		MemLimitHard: limits.GetMemLimitHard(), CpuLimitSec: limits.GetCpuLimitSec(), TermTime: limits.GetTermTime()})
	if err != nil {
		return fmt.Errorf("encode limits: %w", err)
	}
	// Root's own file in root's directory, readable by the shepherd.
	if err := atomicfile.Write(jobexec.LimitsFile(filepath.Join(w.JobDir(id, idx), launchName)), b, 0o644, false); err != nil {
		return fmt.Errorf("write limits of job %d[%d]: %w", id, idx, err)
	}
	if !shepherdAlive(shepherd, uid) {
		return fmt.Errorf("job %d[%d]: its shepherd (pid %d) is not running", id, idx, shepherd)
	}
	// SIGUSR1 kills a process that does not handle it: a shepherd that is
	// still starting (its go is sent before it runs its first line) would
	// die of it, and the job end TERM_CTRL_PID (TestBmod saw a job killed
	// so by bmod -W right after its dispatch). The shepherd handles the
	// signal from before it starts the job: until it says it has, the
	// limits wait in their file, and reportStart tells it.
	w.mu.Lock()
	started := p.pgid > 0
	if !started {
		p.limitsUnsaid = true
	}
	w.mu.Unlock()
	if !started {
		return nil
	}
	return w.tellLimits(k, p)
}

// tellLimits tells job k's shepherd, with SIGUSR1, to read its limits file.
func (w *Worker) tellLimits(k jobKey, p *proc) error {
	if err := syscall.Kill(p.shepherd, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("tell the shepherd of job %d[%d]: %w", k.id, k.idx, err)
	}
	return nil
}

// takePendingLimits returns (and forgets) the limits SetLimits kept for
// job k before it ran here (w.mu held).
func (w *Worker) takePendingLimits(k jobKey) *api.JobSpec {
	lim := w.limitsPending[k]
	delete(w.limitsPending, k)
	return lim
}

// kernelMemory reports whether the kernel holds job's memory limit on
// this host in its cgroup cg, as containment c says (LSF's
// LSB_RESOURCE_ENFORCE="memory"): then the limit is the cgroup's, set at
// its creation and changed by bmod -M, and lsf.conf's sampled
// enforcement (LSB_MEMLIMIT_ENFORCE, LSB_JOB_MEMLIMIT) does not apply.
func (w *Worker) kernelMemory(c *api.Containment, cg cgroup.Job) bool {
	return cg != nil && w.cg != nil && w.cg.CanEnforce("memory") && slices.Contains(c.GetResourceEnforce(), "memory")
}

// slotsHere is the job's slots on this host (at least 1): LSF's cgroup
// memory limit is the job's limit times its tasks on the host.
func (w *Worker) slotsHere(hosts []*api.HostSlots) int64 {
	var n int64
	for _, hs := range hosts {
		if hs.GetHost() == w.cfg.Host {
			n += int64(hs.GetSlots())
		}
	}
	return max(n, 1)
}

// setCgroupMemLimit makes a new memory limit of a job (kb per slot; 0:
// none) its cgroup's, where the kernel holds it (p.kernelMem): the
// limit times the job's slots here, as the cgroup was made with. The
// kernel may refuse a limit below what the job uses now (cgroup v1);
// then the cgroup keeps its old one, as LSF does, and the log says so.
func (w *Worker) setCgroupMemLimit(k jobKey, p *proc, kb int64) {
	w.mu.Lock()
	kernel, hosts := p.kernelMem, p.hosts
	w.mu.Unlock()
	if !kernel {
		return
	}
	lim := kb * w.slotsHere(hosts)
	if err := p.cg.SetMemLimit(lim); err != nil {
		slog.Warn("the job's cgroup keeps its memory limit: the kernel refused the new one", "job", k.id, "index", k.idx,
			"limit_kb", lim, "err", err)
		return
	}
	w.mu.Lock()
	p.memEnforced = lim > 0
	w.mu.Unlock()
}
