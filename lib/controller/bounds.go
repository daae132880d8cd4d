package controller

import (
	"log/slog"
	"time"

	"xce/lib/api"
	"xce/lib/bounds"
)

// What a worker reports about a job is range-checked here too, not only by
// the worker: a remote worker is another program, and the job's side is
// behind it (docs/security.md). Only the worker's word on its host is
// taken at all; these bounds keep a bad word from going negative or past
// the hosts the job ran on.

// jobLimits bounds what job j can have used by time now (unix ns): the
// CPUs and memory of its hosts together and its run time (c.mu held). A
// host whose size is not known bounds nothing but the sign.
func (c *Controller) jobLimits(j *api.Job, now int64) bounds.Limits {
	var l bounds.Limits
	known := true
	for _, hs := range j.GetExecHosts() {
		ncpus, mem := c.hostSize(hs.GetHost())
		if ncpus <= 0 || mem <= 0 {
			known = false
			break
		}
		l.NCPUs += ncpus
		l.MemKb += mem
	}
	if !known || len(j.GetExecHosts()) == 0 {
		l.NCPUs, l.MemKb = 0, 0
	}
	if j.GetStartTime() > 0 && now > j.GetStartTime() {
		l.Elapsed = time.Duration(now - j.GetStartTime())
	}
	return l
}

// hostSize is a host's CPUs and memory (KB), 0 when unknown (c.mu held).
func (c *Controller) hostSize(name string) (ncpus int, memKb int64) {
	h := c.hosts[name]
	switch {
	case h == nil:
		return 0, 0
	case h.local:
		return c.cfg.NCPUs, c.cfg.MaxMemKB
	case h.attrs != nil:
		return int(h.attrs.GetNcpus()), h.attrs.GetMaxmemKb()
	}
	return 0, 0
}

// checkEnd range-checks a worker's report of job j's end (c.mu held).
func (c *Controller) checkEnd(j *api.Job, ev *api.Event) {
	now := time.Now().UnixNano()
	// A job ends after it started and not in the future.
	if ev.Time > now || (j.GetStartTime() > 0 && ev.Time < j.GetStartTime()) {
		ev.Time = now
	}
	if bad := bounds.Event(ev, c.jobLimits(j, ev.Time)); len(bad) > 0 {
		slog.Warn("a worker reported a job's end out of range; clamped", "job", j.GetJobId(),
			"index", j.GetArrayIndex(), "fields", bad)
	}
}

// checkUsage range-checks a running job's usage sample (c.mu held); it
// returns a checked copy when u was out of range, u itself otherwise.
func (c *Controller) checkUsage(j *api.Job, u *api.ResourceUsage) *api.ResourceUsage {
	if u == nil {
		return nil
	}
	v := u.CloneVT()
	if bad := bounds.Usage(v, c.jobLimits(j, time.Now().UnixNano())); len(bad) > 0 {
		slog.Warn("a worker reported a job's usage out of range; clamped", "job", j.GetJobId(),
			"index", j.GetArrayIndex(), "fields", bad)
		return v
	}
	return u
}

// hasPostExec reports whether a job has a post-exec (its own -Ep or the
// configuration's chain). Decoded only for a job whose shepherd died.
func hasPostExec(e *effSpec) bool {
	if e == nil {
		return false
	}
	spec, err := e.Spec()
	return err == nil && (spec.GetPostExec() != "" || len(spec.GetPostExecChain()) > 0)
}
