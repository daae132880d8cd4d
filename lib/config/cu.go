package config

// Compute units (LSF's COMPUTE_UNIT_TYPES in lsb.params and the
// ComputeUnit sections of lsb.hosts):
//
//	[cluster]
//	compute_unit_types = ["enclosure", "rack!"]   # finest first; "!" marks the default type
//
//	[[compute_units]]
//	name = "encl1"
//	type = "enclosure"
//	members = ["hostA", "hg1"]       # hosts and host groups (the finest type)
//
//	[[compute_units]]
//	name = "rack1"
//	type = "rack"
//	members = ["encl1", "encl2"]     # units of the next finer type
//
// Units are an array of tables, not a table keyed by name as host_groups
// are, because their order matters: cu[pref=config] takes them in the
// order they are written, as LSF takes its ComputeUnit section's. As LSF
// requires, hosts (and host groups) are members of units of the finest
// type only, a host is in at most one of them, and the members of a
// coarser unit are units of the type just finer than its own, each in at
// most one such unit.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"xce/lib/resreq"
)

// ComputeUnit is one [[compute_units]] entry.
type ComputeUnit struct {
	Name        string `toml:"name"`
	Type        string `toml:"type"`
	Description string `toml:"description"`
	// Members: host names and host group names ("all" and "~name" as in
	// host groups) for a unit of the finest type; unit names of the next
	// finer type for the others.
	Members []string `toml:"members"`
	// Condense (CONDENSE): bhosts may show the unit as one line.
	Condense bool `toml:"condense"`
}

// CUTypes returns the compute unit types, finest first, without their
// "!", and the default type ("" when none are configured).
func (c *Config) CUTypes() (types []string, def string) {
	for _, t := range c.Cluster.ComputeUnitTypes {
		name, bang := strings.CutSuffix(t, "!")
		types = append(types, name)
		if bang {
			def = name
		}
	}
	if def == "" && len(types) > 0 {
		def = types[0]
	}
	return types, def
}

// ComputeUnit returns the unit named name, or nil.
func (c *Config) ComputeUnit(name string) *ComputeUnit {
	for _, u := range c.ComputeUnits {
		if u.Name == name {
			return u
		}
	}
	return nil
}

// CUHosts returns every host of a unit, those of nested units included,
// sorted (nil for an unknown unit).
func (c *Config) CUHosts(name string) []string {
	set := map[string]bool{}
	c.cuHosts(name, set, 0)
	return slices.Sorted(maps.Keys(set))
}

func (c *Config) cuHosts(name string, set map[string]bool, depth int) {
	u := c.ComputeUnit(name)
	if u == nil || depth > len(c.ComputeUnits) {
		return
	}
	types, _ := c.CUTypes()
	if len(types) > 0 && u.Type == types[0] {
		c.expandHosts(u.Members, set, 0)
		return
	}
	for _, m := range u.Members {
		c.cuHosts(m, set, depth+1)
	}
}

func (c *Config) checkComputeUnits(k *checker) {
	types, _ := c.CUTypes()
	bangs := 0
	level := map[string]int{}
	for i, t := range c.Cluster.ComputeUnitTypes {
		name, bang := strings.CutSuffix(t, "!")
		if bang {
			bangs++
		}
		switch {
		case !ValidName(name) || strings.Contains(name, "!"):
			k.add("cluster.compute_unit_types", "%q is not a valid compute unit type: use letters, digits, '_', '-' and '.', with '!' after the default type", t)
		case level[name] > 0:
			k.add("cluster.compute_unit_types", "%s is listed twice", name)
		}
		level[name] = i + 1
	}
	if bangs > 1 {
		k.add("cluster.compute_unit_types", "only one type may be marked as the default with '!'")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		if t := c.Queues[name].ExclusiveCU; t != "" && level[t] == 0 {
			k.add("queues."+name+".exclusive_cu", "%q is not one of cluster.compute_unit_types (%s)", t, strings.Join(types, " "))
		}
	}
	if len(c.ComputeUnits) > 0 && len(types) == 0 {
		k.add("compute_units.0", "compute units need cluster.compute_unit_types (LSF's COMPUTE_UNIT_TYPES), finest first")
		return
	}
	seen := map[string]int{}
	hostIn := map[string]string{} // host -> its unit of the finest type
	parent := map[string]string{} // unit -> the unit that contains it
	for i, u := range c.ComputeUnits {
		key := fmt.Sprintf("compute_units.%d", i)
		switch {
		case u.Name == "":
			k.add(key+".name", "a compute unit needs a name")
			continue
		case !ValidName(u.Name) || ReservedName(u.Name):
			k.add(key+".name", "%q is not a valid name: use letters, digits, '_', '-', '.' and '@' (no blanks, not a reserved word)", u.Name)
		case c.Hosts[u.Name] != nil || c.HostGroups[u.Name] != nil:
			k.add(key+".name", "%s is also a host or host group; a compute unit needs a name of its own", u.Name)
		}
		if j, dup := seen[u.Name]; dup {
			k.add(key+".name", "compute unit %s is defined twice (first as compute_units.%d)", u.Name, j)
		}
		seen[u.Name] = i
		lv := level[u.Type]
		if lv == 0 {
			k.add(key+".type", "%q is not one of cluster.compute_unit_types (%s)", u.Type, strings.Join(types, " "))
			continue
		}
		if len(u.Members) == 0 {
			k.add(key+".members", "a compute unit needs members")
		}
		if lv == 1 {
			for _, m := range u.Members {
				if err := c.checkHostRef(m, false); err != "" {
					k.add(key+".members", "%s", err)
					continue
				}
				set := map[string]bool{}
				c.expandHosts([]string{m}, set, 0)
				for _, h := range slices.Sorted(maps.Keys(set)) {
					if other, ok := hostIn[h]; ok && other != u.Name {
						k.add(key+".members", "host %s is already in compute unit %s; a host belongs to at most one unit of type %s", h, other, u.Type)
						continue
					}
					hostIn[h] = u.Name
				}
			}
			continue
		}
		for _, m := range u.Members {
			j, ok := seen[m]
			var mu *ComputeUnit
			if ok {
				mu = c.ComputeUnits[j]
			}
			switch {
			case mu == nil && c.ComputeUnit(m) != nil:
				k.add(key+".members", "compute unit %s is defined after %s; define a unit before the units that contain it", m, u.Name)
			case mu == nil:
				k.add(key+".members", "%s is not a compute unit: the members of a unit of type %s are units of type %s", m, u.Type, types[lv-2])
			case mu.Type != types[lv-2]:
				k.add(key+".members", "%s is of type %s: the members of a unit of type %s are units of type %s", m, mu.Type, u.Type, types[lv-2])
			case parent[m] != "" && parent[m] != u.Name:
				k.add(key+".members", "compute unit %s is already in %s; a unit belongs to at most one larger unit", m, parent[m])
			default:
				parent[m] = u.Name
			}
		}
	}
}

// CUSections returns every cu[] section of a requirement: the simple
// one, each compound term's and each alternative's.
func CUSections(r *resreq.ResReq) []*resreq.CU {
	if r == nil {
		return nil
	}
	var out []*resreq.CU
	if r.Simple != nil && r.Simple.CU != nil {
		out = append(out, r.Simple.CU)
	}
	for i := range r.Compound {
		if cu := r.Compound[i].Req.CU; cu != nil {
			out = append(out, cu)
		}
	}
	for _, a := range r.Alternatives {
		out = append(out, CUSections(a.Req)...)
	}
	return out
}

// checkCU rejects at submission a cu[] of a type the cluster does not
// have, and cu[excl] in a queue that does not allow it (LSF's
// EXCLUSIVE=CU[type]).
func (l *layering) checkCU() error {
	types, def := l.cfg.CUTypes()
	for _, cu := range CUSections(l.rr) {
		if len(types) == 0 {
			return reject("%v: cu[]: the cluster has no compute units (compute_unit_types)", resreq.ErrBadResReq)
		}
		t := cu.Type
		if t == "" {
			t = def
		}
		if !slices.Contains(types, t) {
			return reject("%v: cu[type=%s]: %s is not a compute unit type (compute_unit_types: %s)", resreq.ErrBadResReq, t, t, strings.Join(types, " "))
		}
		if cu.Excl && l.q.ExclusiveCU != t {
			return reject("%s: Queue does not accept EXCLUSIVE jobs (cu[excl] needs the queue's exclusive_cu = %q)", l.q.Name, t)
		}
	}
	return nil
}
