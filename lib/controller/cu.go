package controller

import (
	"slices"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/policy"
)

// computeUnits are the configured compute units as bmgroup -cu shows
// them, in configuration order.
func computeUnits(conf *config.Config) []*api.ComputeUnit {
	var out []*api.ComputeUnit
	for _, u := range conf.ComputeUnits {
		out = append(out, &api.ComputeUnit{Name: u.Name, Type: u.Type, Members: u.Members, Hosts: conf.CUHosts(u.Name), Condense: u.Condense})
	}
	return out
}

// cuExclHosts are the hosts of the compute units that running cu[excl]
// jobs hold, as lib/sched locks them (c.mu held); nil when none.
func (c *Controller) cuExclHosts(conf *config.Config) map[string]bool {
	if len(conf.ComputeUnits) == 0 {
		return nil
	}
	var out map[string]bool
	units := map[string][][]string{} // type -> each unit's hosts
	for _, r := range c.running {
		typ := policy.CUExcl(conf, c.parsedReq(r))
		if typ == "" {
			continue
		}
		us, ok := units[typ]
		if !ok {
			for _, u := range conf.ComputeUnits {
				if u.Type == typ {
					us = append(us, conf.CUHosts(u.Name))
				}
			}
			units[typ] = us
		}
		for _, hs := range r.job.ExecHosts {
			for _, hosts := range us {
				if !slices.Contains(hosts, hs.Host) {
					continue
				}
				if out == nil {
					out = map[string]bool{}
				}
				for _, h := range hosts {
					out[h] = true
				}
			}
		}
	}
	return out
}

// cuExclStatus is a host's bhosts status once the compute units held
// exclusively are known: a host that would otherwise be ok or merely
// full is closed_cu_excl (LSF's) while its unit is held.
func cuExclStatus(st api.HostState, detail string, held bool) (api.HostState, string) {
	if held && (detail == "ok" || detail == "closed_Full") {
		return api.HostState_HOST_CLOSED, "closed_cu_excl"
	}
	return st, detail
}

// cuMembers are the known hosts of compute unit name, for a command that
// takes a unit where it takes hosts (bhosts compute_unit).
func cuMembers(conf *config.Config, name string, known map[string]*host) []string {
	var out []string
	for _, h := range conf.CUHosts(name) {
		if known[h] != nil {
			out = append(out, h)
		}
	}
	return out
}

// condensedUnits are the compute units configured with condense, which
// bhosts shows as one line each.
func condensedUnits(conf *config.Config) []*api.ComputeUnit {
	var out []*api.ComputeUnit
	for _, u := range conf.ComputeUnits {
		if u.Condense {
			out = append(out, &api.ComputeUnit{Name: u.Name, Type: u.Type, Hosts: conf.CUHosts(u.Name), Condense: true})
		}
	}
	return out
}
