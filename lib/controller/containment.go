package controller

// Containment (issue 30): what the controller tells each host's worker
// about containing a job there, and the cores lib/sched hands out where
// the configuration enforces cpu.

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/sched"
)

// hostCores are the cores lib/sched gives jobs on a host that enforces
// cpu: 0..ncpus-1 as the worker reports ncpus (nil: the host does not
// bind cores, or has not reported).
func hostCores(conf *config.Config, host string, ncpus int32) []int {
	if ncpus <= 0 || !conf.Containment(host).Enforces("cpu") {
		return nil
	}
	out := make([]int, ncpus)
	for i := range out {
		out[i] = i
	}
	return out
}

// setContainment fills each of a dispatched job's hosts' containment:
// the cluster's settings with the host's overrides and, where memory is
// enforced, the memory the job's cgroup may hold there. LSF's cgroup
// limit is per host: the job's limit (-M, else the profile's or the
// queue's default MEMLIMIT, as the effective spec has it) times the
// job's slots on the host, since XCE has no bsub -hl. A job without a
// memory limit gets none: IBM's bsub -hl and LSB_RESOURCE_ENFORCE pages
// set the cgroup limit from the merged memory limit only, not from
// rusage[mem].
func setContainment(conf *config.Config, eff *effSpec, hosts []*api.HostSlots) {
	slotsOn := make(map[string]int64, len(hosts))
	for _, hs := range hosts {
		slotsOn[hs.Host] += int64(hs.Slots)
	}
	var memKB int64 = -1 // not read yet
	for _, hs := range hosts {
		cc := conf.Containment(hs.Host)
		ct := &api.Containment{ProcessTracking: cc.ProcessTracking, CgroupAcct: cc.CgroupAcct, ResourceEnforce: cc.ResourceEnforce}
		if cc.Enforces("memory") {
			if memKB < 0 {
				memKB = 0
				if spec, err := eff.Spec(); err != nil {
					slog.Warn("effective spec does not decode: no cgroup memory limit", "err", err)
				} else {
					memKB = spec.GetMemLimitKb()
				}
			}
			ct.MemLimitKb = memKB * slotsOn[hs.Host]
		}
		hs.Containment = ct
	}
}

// noteStaleCores keeps the cores job r holds on host name as its old
// instance's there, when the host failed and the job is rerun elsewhere
// or ended (c.stale): what runs of it there holds them until the host's
// worker, back, has ended it (c.mu held).
func (c *Controller) noteStaleCores(name string, r *rec) {
	var cores []int
	for _, hs := range r.job.ExecHosts {
		if hs.Host == name {
			cores = append(cores, heldCPUs(hs)...)
		}
	}
	if len(cores) == 0 {
		return
	}
	if c.staleCores == nil {
		c.staleCores = map[string]map[key][]int{}
	}
	if c.staleCores[name] == nil {
		c.staleCores[name] = map[key][]int{}
	}
	c.staleCores[name][key{r.job.JobId, r.job.ArrayIndex}] = cores
}

// withoutStaleCores is a host's cores less those old instances still
// hold there (noteStaleCores), so that no new job is given a core one of
// them runs on; an instance whose end was reported (no longer in
// c.stale) gives its cores back (c.mu held).
func (c *Controller) withoutStaleCores(name string, cpus []int) []int {
	held := c.staleCores[name]
	if len(held) == 0 || cpus == nil {
		return cpus
	}
	taken := map[int]bool{}
	for k, cores := range held {
		if !c.stale[name][k] {
			delete(held, k)
			continue
		}
		for _, x := range cores {
			taken[x] = true
		}
	}
	if len(held) == 0 {
		delete(c.staleCores, name)
	}
	out := make([]int, 0, len(cpus))
	for _, x := range cpus {
		if !taken[x] {
			out = append(out, x)
		}
	}
	return out
}

// heldCPUs is the cores a running job holds on a host, as its record
// keeps them (nil: none).
func heldCPUs(hs *api.HostSlots) []int {
	if len(hs.Cpus) == 0 {
		return nil
	}
	out := make([]int, len(hs.Cpus))
	for i, c := range hs.Cpus {
		out[i] = int(c)
	}
	return out
}

// recordCPUs is the cores of a placement on a host as the job's record
// keeps them.
func recordCPUs(ha sched.HostAlloc) []int32 {
	if ha.CPUs == nil {
		return nil
	}
	out := make([]int32, len(ha.CPUs))
	for i, c := range ha.CPUs {
		out[i] = int32(c)
	}
	return out
}

// taskContainment is what a blaunch task on host gets of the job's
// containment there and the cores the job holds on it (every entry of
// the host: a compound requirement may place several parts there).
func taskContainment(j *api.Job, host string) (*api.Containment, []int32) {
	var ct *api.Containment
	var cpus []int32
	for _, hs := range j.ExecHosts {
		if hs.Host != host {
			continue
		}
		if ct == nil {
			ct = hs.Containment
		}
		cpus = append(cpus, hs.Cpus...)
	}
	return ct, cpus
}

// taskBindEnv is a blaunch task's environment with LSB_BIND_CPU_LIST
// naming the cores of the task's host (LSF sets it per task host), in
// place of the blaunch host's it inherited; env as it is when the job
// holds no cores there.
func taskBindEnv(env []string, cpus []int32) []string {
	if len(cpus) == 0 {
		return env
	}
	c := slices.Clone(cpus)
	slices.Sort(c)
	parts := make([]string, len(c))
	for i, n := range c {
		parts[i] = strconv.Itoa(int(n))
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LSB_BIND_CPU_LIST=") {
			out = append(out, kv)
		}
	}
	return append(out, "LSB_BIND_CPU_LIST="+strings.Join(parts, ","))
}
