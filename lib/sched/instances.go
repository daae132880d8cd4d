package sched

import "math"

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
// The pools and the pick are those every instance resource shares (inst.go).

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

// assignInstances gives the decision's placements their instances
// (see above). It reads the snapshot only.
func assignInstances(s *Snapshot, d *Decision) {
	if len(d.Placements) == 0 {
		return
	}
	t := newInstTable(s.Hosts)
	if t == nil {
		return
	}
	instRes := map[string]bool{} // every instance resource of some host
	for _, h := range t.hosts {
		for r := range h.Instances {
			instRes[r] = true
		}
	}
	victims := map[JobKey]bool{}
	for _, p := range d.Placements {
		for _, v := range p.Victims {
			victims[v] = true
		}
	}
	t.holdAllocs(s.Running, victims)
	kept := d.Placements[:0]
	for _, p := range d.Placements {
		if usesAny(p.Hosts, instRes) {
			if why := giveInstances(&p, t); why != "" {
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

// giveInstances fills the instances of one placement's hosts, holding
// them in t; it returns a pending reason, and holds nothing, when one of
// its hosts has too few free.
func giveInstances(p *Placement, t *instTable) string {
	type pick struct {
		hi    int
		res   string
		names []string
	}
	var picks []pick
	for hi := range p.Hosts {
		ha := &p.Hosts[hi]
		h := t.hosts[ha.Host]
		if h == nil {
			continue
		}
		for _, res := range t.resources(h) {
			n := instanceNeed(ha, res)
			if n == 0 {
				continue
			}
			// Held as it is picked: the placement's parts may share a host.
			got := t.pool(ha.Host, res).take(n)
			if got == nil {
				for _, pk := range picks {
					t.pool(p.Hosts[pk.hi].Host, pk.res).give(pk.names)
				}
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
	}
	return ""
}
