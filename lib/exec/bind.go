package exec

// The cores the scheduler bound the job to (resource_enforce cpu,
// api.HostSlots.cpus), as LSF tells an affinity job: LSB_BIND_CPU_LIST
// names this host's, and the affinity host file (LSB_AFFINITY_HOSTFILE)
// gives each slot of the job, host by host in LSB_HOSTS's order, its
// line "HOST CPU,CPU,..." (the form IBM's Open MPI rank-file sample and
// Open MPI's LSF support read: host, then the slot's physical CPU ids).

import (
	"slices"
	"strconv"
	"strings"

	"xce/lib/api"
)

// affinityFileSuffix names the affinity host file next to the job file.
const affinityFileSuffix = ".affinity"

// bound reports whether the job holds cores on any host.
func (s *shepherd) bound() bool {
	for _, h := range s.hosts {
		if len(h.GetCpus()) > 0 {
			return true
		}
	}
	return false
}

// bindEnv is LSB_BIND_CPU_LIST (this host's cores, ascending, comma
// separated) and LSB_AFFINITY_HOSTFILE; nil when the job holds no cores.
func (s *shepherd) bindEnv() []string {
	if !s.bound() {
		return nil
	}
	var here []int32
	for _, h := range s.hosts {
		if h.GetHost() == s.l.GetHost() || s.l.GetHost() == "" {
			here = append(here, h.GetCpus()...)
		}
	}
	out := []string{"LSB_AFFINITY_HOSTFILE=" + s.l.GetJobFile() + affinityFileSuffix}
	if len(here) > 0 {
		out = append(out, "LSB_BIND_CPU_LIST="+cpuList(here))
	}
	return out
}

// cpuList is cores ascending, comma separated: "0,1,5".
func cpuList(cpus []int32) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	parts := make([]string, len(c))
	for i, n := range c {
		parts[i] = strconv.Itoa(int(n))
	}
	return strings.Join(parts, ",")
}

// affinityFile is the affinity host file: one line per slot, its host
// and its cores. A host's cores are dealt to its slots in order, in
// shares as even as they go (an exclusive job holds every core of its
// hosts, more than its slots).
func affinityFile(hosts []*api.HostSlots) string {
	var b strings.Builder
	for _, h := range hosts {
		n := int(max(h.GetSlots(), 1))
		cpus := slices.Clone(h.GetCpus())
		slices.Sort(cpus)
		for k := range n {
			share := cpus[k*len(cpus)/n : (k+1)*len(cpus)/n]
			if len(share) == 0 && len(cpus) > 0 {
				share = cpus[k%len(cpus) : k%len(cpus)+1] // more slots than cores
			}
			b.WriteString(h.GetHost())
			if len(share) > 0 {
				b.WriteString(" " + cpuList(share))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
