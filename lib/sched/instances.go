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

// assignInstances gives the decision's placements their instances
// (see above). It reads the snapshot only.
func assignInstances(s *Snapshot, d *Decision) {
	if len(d.Placements) == 0 {
		return
	}
	byName := map[string]*Host{}
	for i := range s.Hosts {
		if len(s.Hosts[i].Instances) > 0 {
			byName[s.Hosts[i].Name] = &s.Hosts[i]
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
	// held[host][res][name]: the instances taken.
	held := map[string]map[string]map[string]bool{}
	take := func(host, res, name string) {
		if held[host] == nil {
			held[host] = map[string]map[string]bool{}
		}
		if held[host][res] == nil {
			held[host][res] = map[string]bool{}
		}
		held[host][res][name] = true
	}
	for _, a := range s.Running {
		if victims[a.Job] {
			continue
		}
		for _, ha := range a.Hosts {
			for res, names := range ha.Instances {
				for _, n := range names {
					take(ha.Host, res, n)
				}
			}
		}
	}
	kept := d.Placements[:0]
	for _, p := range d.Placements {
		if why := giveInstances(&p, byName, held, take); why != "" {
			if d.Pending != nil {
				d.Pending[p.Job] = []string{why}
			}
			continue
		}
		kept = append(kept, p)
	}
	clear(d.Placements[len(kept):])
	d.Placements = kept
}

// giveInstances fills the instances of one placement's hosts, marking
// them held; it returns a pending reason, and takes nothing, when one of
// its hosts has too few free.
func giveInstances(p *Placement, byName map[string]*Host, held map[string]map[string]map[string]bool, take func(host, res, name string)) string {
	type pick struct {
		hi    int
		res   string
		names []string
	}
	var picks []pick
	// busy is what this placement took so far (its parts may share a
	// host), on top of held.
	busy := map[string]map[string]bool{}
	for hi := range p.Hosts {
		ha := &p.Hosts[hi]
		h := byName[ha.Host]
		if h == nil {
			continue
		}
		for _, res := range slices.Sorted(maps.Keys(h.Instances)) {
			n := instanceNeed(ha, res)
			if n == 0 {
				continue
			}
			key := ha.Host + "\x00" + res
			if busy[key] == nil {
				busy[key] = map[string]bool{}
			}
			var got []string
			for _, name := range h.Instances[res] {
				if len(got) == n {
					break
				}
				if !held[ha.Host][res][name] && !busy[key][name] {
					got = append(got, name)
					busy[key][name] = true
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
			take(ha.Host, pk.res, n)
		}
	}
	return ""
}
