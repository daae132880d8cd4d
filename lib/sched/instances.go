package sched

import (
	"maps"
	"math"
	"slices"
)

// Named instances (the resource model's L3 layer, DESIGN.md): a host
// that lists the instances of a resource (Host.Instances: "fpga" ->
// fpga0, fpga1) has them handed out by name. The resource is a counter
// like any other for select, order and rusage (the host's value is the
// number of its instances, and every reservation is subtracted whole,
// without the rusage duration or decay: an instance is held until the
// job ends); on top of that, every placement on such a host is given,
// for each instance resource its rusage reserves there, that many
// instances no running job and no earlier placement of the cycle holds
// (HostAlloc.Instances), the first free ones in the host's order. A
// running job holds the instances named in its HostAlloc.Instances
// (the controller keeps them with the job, so they stay held across
// restarts and fail-over); a preemption victim's are free to its
// preemptor. Because the counter already kept every host within its
// count, free instances are always there for a placement; should the
// lists disagree (a host that lists fewer instances than its running
// jobs hold), a placement that cannot get all its instances is taken
// back and pends with the resource named.
//
// GPUs keep their own accounting (gpu.go) for now.

// instanceNeed is what the rusage of a part of a job on one host
// reserves of an instance resource: the amount at the start (per host,
// or per task with /task), rounded up to whole instances.
func instanceNeed(ha *HostAlloc, res string) int {
	a := amount(ha.Rusage, res, 0, ha.Slots, ha.Lead, false)
	if a <= 0 || math.IsNaN(a) {
		return 0
	}
	return int(math.Ceil(a - 1e-9))
}

// isInstance reports whether the host lists instances of res.
func (h *Host) isInstance(res string) bool {
	_, ok := h.Instances[res]
	return ok
}

// instanceHost is a host that lists instances, with its resources sorted.
type instanceHost struct {
	h   *Host
	res []string
}

// assignInstances gives the decision's placements their instances
// (see above). It reads the snapshot only.
func assignInstances(s *Snapshot, d *Decision) {
	if len(d.Placements) == 0 {
		return
	}
	byName := map[string]instanceHost{}
	instRes := map[string]bool{} // every instance resource of some host
	for i := range s.Hosts {
		h := &s.Hosts[i]
		if len(h.Instances) > 0 {
			byName[h.Name] = instanceHost{h, slices.Sorted(maps.Keys(h.Instances))}
			for r := range h.Instances {
				instRes[r] = true
			}
		}
	}
	if len(byName) == 0 {
		return
	}
	victims := map[JobKey]bool{}
	for _, p := range d.Placements {
		for _, v := range p.Victims {
			victims[v] = true
		}
	}
	held := heldSet{}
	for _, a := range s.Running {
		if victims[a.Job] {
			continue
		}
		for _, ha := range a.Hosts {
			for res, names := range ha.Instances {
				for _, n := range names {
					held.take(ha.Host, res, n)
				}
			}
		}
	}
	kept := d.Placements[:0]
	for _, p := range d.Placements {
		if usesAny(p.Hosts, instRes) {
			if why := giveInstances(&p, byName, held); why != "" {
				if d.Pending != nil {
					d.Pending[p.Job] = []string{why}
				}
				continue
			}
		}
		kept = append(kept, p)
	}
	clear(d.Placements[len(kept):])
	d.Placements = kept
}

// heldSet is the instances taken, by host, resource and name.
type heldSet map[string]map[string]map[string]bool

func (hs heldSet) take(host, res, name string) {
	if hs[host] == nil {
		hs[host] = map[string]map[string]bool{}
	}
	if hs[host][res] == nil {
		hs[host][res] = map[string]bool{}
	}
	hs[host][res][name] = true
}

// usesAny reports whether the rusage of one of the hosts names one of
// the resources.
func usesAny(has []HostAlloc, res map[string]bool) bool {
	for i := range has {
		for _, u := range has[i].Rusage {
			for _, r := range u.Resources {
				if res[r.Name] {
					return true
				}
			}
		}
	}
	return false
}

// giveInstances fills the instances of one placement's hosts, marking
// them held; it returns a pending reason, and takes nothing, when one of
// its hosts has too few free.
func giveInstances(p *Placement, byName map[string]instanceHost, held heldSet) string {
	type pick struct {
		hi    int
		res   string
		names []string
	}
	var picks []pick
	// taken reports whether this placement took the instance already
	// (its parts may share a host).
	taken := func(host, res, name string) bool {
		for _, pk := range picks {
			if pk.res == res && p.Hosts[pk.hi].Host == host && slices.Contains(pk.names, name) {
				return true
			}
		}
		return false
	}
	for hi := range p.Hosts {
		ha := &p.Hosts[hi]
		ih, ok := byName[ha.Host]
		if !ok {
			continue
		}
		for _, res := range ih.res {
			n := instanceNeed(ha, res)
			if n == 0 {
				continue
			}
			var got []string
			for _, name := range ih.h.Instances[res] {
				if len(got) == n {
					break
				}
				if !held[ha.Host][res][name] && !slices.Contains(got, name) && !taken(ha.Host, res, name) {
					got = append(got, name)
				}
			}
			if len(got) < n {
				return "Job requirements for reserving resource (" + res + ") not satisfied: 1 host"
			}
			picks = append(picks, pick{hi, res, got})
		}
	}
	for _, pk := range picks {
		ha := &p.Hosts[pk.hi]
		if ha.Instances == nil {
			ha.Instances = map[string][]string{}
		}
		ha.Instances[pk.res] = append(ha.Instances[pk.res], pk.names...)
		for _, n := range pk.names {
			held.take(ha.Host, pk.res, n)
		}
	}
	return ""
}
