package sched

import (
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
// (see above). It reads the snapshot only; byName is the cycle's index
// of the snapshot's hosts (nil: made here).
//
// A cycle places tens of thousands of jobs, so this keeps to slices:
// the pools by host position, made as a host is first met, carved from
// a few shared blocks, and the names given out carved likewise.
func assignInstances(s *Snapshot, d *Decision, byName map[string]int) {
	if len(d.Placements) == 0 || !anyInstances(s.Hosts) {
		return
	}
	t := &placeInsts{hosts: s.Hosts, byName: byName, at: make([]hostInsts, len(s.Hosts))}
	var victims map[JobKey]bool
	for _, p := range d.Placements {
		for _, v := range p.Victims {
			if victims == nil {
				victims = map[JobKey]bool{}
			}
			victims[v] = true
		}
	}
	for _, a := range s.Running {
		if victims[a.Job] {
			continue
		}
		for i := range a.Hosts {
			ha := &a.Hosts[i]
			if len(ha.Instances) == 0 {
				continue
			}
			ih := t.host(ha.Host)
			if ih == nil {
				continue
			}
			for res, names := range ha.Instances {
				if np := ih.pool(res); np != nil {
					for _, n := range names {
						np.holdName(n)
					}
				}
			}
		}
	}
	kept := d.Placements[:0]
	for _, p := range d.Placements {
		if why := t.give(&p); why != "" {
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

// anyInstances reports whether a host lists instances.
func anyInstances(hosts []Host) bool {
	for i := range hosts {
		if len(hosts[i].Instances) > 0 {
			return true
		}
	}
	return false
}

// placeInsts is the named instances of a snapshot's hosts and what
// holds them, for giving a cycle's placements theirs.
type placeInsts struct {
	hosts  []Host
	byName map[string]int
	at     []hostInsts // by host position

	// blocks the hosts' tables and the names given are carved from
	res   []string
	pools []namedPool
	slots []instSlot
	names []string
	picks []instPick
	pos   []int
}

// hostInsts is one host's instance resources, sorted (the order a
// placement is given them in), and their pools.
type hostInsts struct {
	ready bool
	res   []string
	pools []namedPool
}

// instPick is the instances of one resource picked for a part of a
// placement.
type instPick struct {
	hi    int
	np    *namedPool
	res   string
	names []string
}

// host is the instances of the host named; nil when it lists none.
func (t *placeInsts) host(name string) *hostInsts {
	i, ok := t.byName[name]
	if !ok || i >= len(t.hosts) || t.hosts[i].Name != name {
		if t.byName != nil && !ok {
			return nil
		}
		t.byName = hostIndex(t.hosts, nil) // the given index is not this snapshot's
		if i, ok = t.byName[name]; !ok {
			return nil
		}
	}
	h := &t.hosts[i]
	if len(h.Instances) == 0 {
		return nil
	}
	ih := &t.at[i]
	if ih.ready {
		return ih
	}
	ih.ready = true
	n := len(h.Instances)
	ih.res = carve(&t.res, n, 256)
	k := 0
	for r := range h.Instances {
		ih.res[k] = r
		k++
	}
	slices.Sort(ih.res)
	ih.pools = carve(&t.pools, n, 256)
	for k, r := range ih.res {
		names := h.Instances[r]
		ih.pools[k] = namedPool{instPool: instPool{st: carve(&t.slots, len(names), 2048)}, names: names}
	}
	return ih
}

// pool is the host's pool of res; nil when it lists no such instances.
func (ih *hostInsts) pool(res string) *namedPool {
	for k, r := range ih.res {
		if r == res {
			return &ih.pools[k]
		}
	}
	return nil
}

// carve is n zeroed elements cut from the block *b (a new block of at
// least size when it has too few left), capped so that appending to
// them copies.
func carve[T any](b *[]T, n, size int) []T {
	if cap(*b)-len(*b) < n {
		*b = make([]T, 0, max(size, n))
	}
	l := len(*b)
	*b = (*b)[:l+n]
	return (*b)[l : l+n : l+n]
}

// give fills the instances of one placement's hosts, holding them; it
// returns a pending reason, and holds nothing, when one of its hosts has
// too few free.
func (t *placeInsts) give(p *Placement) string {
	picks := t.picks[:0]
	for hi := range p.Hosts {
		ha := &p.Hosts[hi]
		ih := t.host(ha.Host)
		if ih == nil {
			continue
		}
		for k, res := range ih.res {
			n := instanceNeed(ha, res)
			if n == 0 {
				continue
			}
			// Held as it is picked: the placement's parts may share a host.
			np := &ih.pools[k]
			got := t.take(np, n)
			if got == nil {
				for _, pk := range picks {
					pk.np.give(pk.names)
				}
				t.picks = picks[:0]
				return "Job requirements for reserving resource (" + res + ") not satisfied: 1 host"
			}
			picks = append(picks, instPick{hi, np, res, got})
		}
	}
	for _, pk := range picks {
		ha := &p.Hosts[pk.hi]
		if ha.Instances == nil {
			ha.Instances = map[string][]string{}
		}
		if old := ha.Instances[pk.res]; len(old) > 0 {
			ha.Instances[pk.res] = append(old, pk.names...)
		} else {
			ha.Instances[pk.res] = pk.names
		}
	}
	t.picks = picks[:0]
	return ""
}

// take picks the first n free instances of np and holds them, the names
// carved from t's block; nil, holding nothing, when fewer are free.
func (t *placeInsts) take(np *namedPool, n int) []string {
	pos := t.pos[:0]
	for i := range np.st {
		if np.usable(i, true) {
			pos = append(pos, i)
			if len(pos) == n {
				break
			}
		}
	}
	t.pos = pos[:0]
	if len(pos) < n {
		return nil
	}
	out := carve(&t.names, n, 4096)
	for k, i := range pos {
		out[k] = np.names[i]
	}
	for _, name := range out {
		np.holdName(name)
	}
	return out
}
