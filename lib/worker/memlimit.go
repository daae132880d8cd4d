package worker

import (
	"bytes"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"time"

	"xce/lib/api"
)

// The memory limit LSF enforces by sampling (lsf.conf's
// LSB_MEMLIMIT_ENFORCE or LSB_JOB_MEMLIMIT, or a hard -M N!), for a job
// whose cgroup measures it but does not hold the limit (memory is not in
// resource_enforce). The shepherd enforces it from its samples of the
// job's process group; a job that stops its shepherd, or moves its
// processes out of the group, would escape it. The worker (root) backs
// it up from the cgroup, which holds every process the job started:
// a job whose resident memory stays over its limit for longer than
// backstop after the shepherd should have seen it is ended TERM_MEMLIMIT,
// as the shepherd would have (SIGINT, SIGTERM, SIGKILL; SIGKILL at once
// for a hard limit).

// memLimitSampled reports whether the limit kb (hard or not) is one LSF
// enforces by sampling on this worker.
func (w *Worker) memLimitSampled(kb int64, hard bool) bool {
	return kb > 0 && (hard || w.cfg.MemlimitEnforce || w.cfg.JobMemlimit)
}

// watchMemLimit starts or updates the worker's watch of job k's sampled
// memory limit (kb per job; hard: -M N!). A new limit (bmod) replaces the
// old; one watch runs per job.
func (w *Worker) watchMemLimit(k jobKey, p *proc, kb int64, hard bool) {
	if p.cg == nil || w.cg == nil || !w.cg.Has("memory") {
		return
	}
	w.mu.Lock()
	p.memKB, p.memHard = kb, hard
	start := p.acct && !p.kernelMem && w.memLimitSampled(kb, hard) && !p.memWatch
	if start {
		p.memWatch = true
	}
	w.mu.Unlock()
	if !start {
		return
	}
	go func() {
		t := time.NewTicker(cpuCheckInterval)
		defer t.Stop()
		var over time.Time // since when the job has been over its limit
		for {
			select {
			case <-p.ended:
				return
			case <-t.C:
			}
			w.mu.Lock()
			kb, hard := p.memKB, p.memHard
			w.mu.Unlock()
			res, err := p.cg.Resident()
			if !w.memLimitSampled(kb, hard) || err != nil {
				over = time.Time{}
				continue
			}
			// The shepherd shares the cgroup; its own memory is not the
			// job's. A handed shepherd's was charged where it was first
			// touched, in the cgroup of its first job.
			if !p.handed {
				res -= residentOf(p.shepherd)
			}
			used := max(res, 0) >> 10
			if used <= kb {
				over = time.Time{}
				continue
			}
			if over.IsZero() {
				over = time.Now()
			}
			if time.Since(over) < backstop {
				continue
			}
			if !w.markLimit(k, p, api.TermReason_TERM_MEMLIMIT) {
				return
			}
			slog.Warn("the job is over its memory limit (its cgroup's resident memory) and its shepherd did not end it: the worker does",
				"job", k.id, "index", k.idx, "used_kb", used, "limit_kb", kb)
			sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
			if hard {
				sigs = []syscall.Signal{syscall.SIGKILL}
			}
			w.terminate(k.id, k.idx, api.TermReason_TERM_MEMLIMIT, sigs...)
			// The sequence spares the shepherd; a stopped one would never
			// report the end: the whole cgroup goes, as for the run limit.
			select {
			case <-p.ended:
			case <-time.After(time.Duration(len(sigs))*w.cfg.TerminateInterval + backstop):
				slog.Warn("the job outlived its memory limit's termination: the worker kills its cgroup", "job", k.id, "index", k.idx)
				if err := p.cg.Kill(); err != nil {
					slog.Warn("kill the job's cgroup", "job", k.id, "index", k.idx, "err", err)
				}
			}
			return
		}
	}()
}

// residentOf is a process's resident memory in bytes (/proc/PID/statm's
// second field, in pages), 0 when it is gone.
func residentOf(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// markLimit records reason as the limit the worker ends job k for, unless
// one is recorded already, and says whether p is still k's run (a watch
// of an ended run stops).
func (w *Worker) markLimit(k jobKey, p *proc, reason api.TermReason) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.jobs[k] != p {
		return false
	}
	if p.enforced == api.TermReason_TERM_UNKNOWN {
		p.enforced = reason
	}
	return true
}
