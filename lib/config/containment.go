package config

import (
	"maps"
	"slices"
	"strings"
)

// clusterOnly is a host name no host has: Containment(clusterOnly) is
// the cluster's own settings.
const clusterOnly = "\x00"

// Enforceable are the values resource_enforce accepts.
var Enforceable = []string{"memory", "cpu", "gpu"}

// Containment is how the worker of one host contains its jobs: the
// cluster's process_tracking, cgroup_acct and resource_enforce with the
// host's overrides applied.
type Containment struct {
	ProcessTracking bool
	CgroupAcct      bool
	// ResourceEnforce lists what the kernel enforces, in Enforceable's
	// order, each once.
	ResourceEnforce []string
}

// Enforces reports whether the kernel enforces resource r ("memory",
// "cpu" or "gpu").
func (c Containment) Enforces(r string) bool { return slices.Contains(c.ResourceEnforce, r) }

// Containment returns how host contains its jobs (a host the
// configuration does not list gets the cluster's settings).
func (c *Config) Containment(host string) Containment {
	pt, acct, enf := c.Cluster.ProcessTracking, c.Cluster.CgroupAcct, c.Cluster.ResourceEnforce
	if h := c.Hosts[host]; h != nil {
		if h.ProcessTracking != nil {
			pt = h.ProcessTracking
		}
		if h.CgroupAcct != nil {
			acct = h.CgroupAcct
		}
		if h.ResourceEnforce != nil {
			enf = h.ResourceEnforce
		}
	}
	out := Containment{ProcessTracking: pt == nil || *pt, CgroupAcct: acct == nil || *acct}
	if enf != nil {
		for _, r := range Enforceable {
			if slices.Contains(*enf, r) {
				out.ResourceEnforce = append(out.ResourceEnforce, r)
			}
		}
	}
	// LSF: memory enforcement sets LSF_LINUX_CGROUP_ACCT=Y itself, for
	// the usage its checks read.
	if out.Enforces("memory") {
		out.CgroupAcct = true
	}
	return out
}

// checkContainment checks the cgroup keys of the cluster and of every
// host.
func (c *Config) checkContainment(k *checker) {
	c.checkEnforce(k, "cluster", c.Cluster.ProcessTracking, c.Cluster.ResourceEnforce, clusterOnly)
	for _, name := range slices.Sorted(maps.Keys(c.Hosts)) {
		h := c.Hosts[name]
		c.checkEnforce(k, "hosts."+name, h.ProcessTracking, h.ResourceEnforce, name)
	}
}

func (c *Config) checkEnforce(k *checker, key string, pt *bool, enf *[]string, host string) {
	if enf != nil {
		for _, r := range *enf {
			if !slices.Contains(Enforceable, r) {
				k.add(key+".resource_enforce", "%q: expected %s", r, quoteList(Enforceable))
			}
		}
	}
	// LSF: enforcement needs LSF_PROCESS_TRACKING=Y (the limits are set
	// on the job's cgroup). Said where this section sets one of the two.
	eff := c.Containment(host)
	if len(eff.ResourceEnforce) == 0 || eff.ProcessTracking || pt == nil && enf == nil {
		return
	}
	at := key + ".process_tracking"
	if pt == nil {
		at = key + ".resource_enforce"
	}
	k.add(at, "resource_enforce (%s) needs process_tracking = true: the limits are set on the job's cgroup", strings.Join(eff.ResourceEnforce, ", "))
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = TOMLString(v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
