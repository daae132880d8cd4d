package sched

import (
	"math/bits"
	"slices"
)

// One mechanism for the resource model's L3 layer (DESIGN.md): every
// instance resource of a host (its GPU devices, the fpga0, fpga1 of
// Host.Instances) is an index space, the instances in the host's order,
// with what holds each (instPool). What holds an instance is charged
// from the allocations that name it, the running jobs' (which the
// controller keeps with the job, so they are restored across restarts
// and fail-over), the claims' and this cycle's earlier placements'; a
// placement is given instances by one pick, the first usable ones in
// the host's order, through filters a resource adds (a GPU's model and
// memory, gpu.go). A named instance is held by one job at a time; a GPU
// may be shared by several jobs unless one of them holds it alone.

// instPool is what holds each instance of one resource of one host.
type instPool struct {
	st []instSlot // by position
}

// instSlot is what holds one instance.
type instSlot struct {
	n     int32 // holders
	alone bool  // one of them shares it with no other
}

func newInstPool(n int) instPool {
	return instPool{st: make([]instSlot, n)}
}

// size is the number of instances.
func (p *instPool) size() int { return len(p.st) }

// holders is the number of holders of instance i.
func (p *instPool) holders(i int) int { return int(p.st[i].n) }

// heldAlone reports whether a holder of instance i shares it with no
// other.
func (p *instPool) heldAlone(i int) bool { return p.st[i].alone }

// hold charges one more holder of instance i; alone: it shares it with
// no other.
func (p *instPool) hold(i int, alone bool) {
	p.st[i].n++
	p.st[i].alone = p.st[i].alone || alone
}

// release takes one holder of instance i off; alone says whether one of
// those left holds it alone.
func (p *instPool) release(i int, alone bool) {
	p.st[i].n--
	p.st[i].alone = alone
}

// usable reports whether a job may use instance i now: no holder keeps
// it alone, and a job that wants it alone finds it unheld.
func (p *instPool) usable(i int, alone bool) bool {
	st := p.st[i]
	return !st.alone && (!alone || st.n == 0)
}

// idle counts the instances nobody holds.
func (p *instPool) idle() int {
	n := 0
	for _, st := range p.st {
		if st.n == 0 {
			n++
		}
	}
	return n
}

// usableMask is the positions of cand (a bit each; pools of at most 64)
// that a job may use now (usable) and that pass ok (nil: all).
func (p *instPool) usableMask(cand uint64, alone bool, ok func(i int) bool) uint64 {
	var out uint64
	for m := cand; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if p.usable(i, alone) && (ok == nil || ok(i)) {
			out |= 1 << i
		}
	}
	return out
}

// pickNames is the names of the first n free instances that ok accepts
// (nil: any), holding none; nil when fewer are free.
func (np *namedPool) pickNames(n int, ok func(int) bool) []string {
	pos := np.pickFirst(n, true, ok)
	if pos == nil {
		return nil
	}
	out := make([]string, len(pos))
	for k, i := range pos {
		out[k] = np.names[i]
	}
	return out
}

// pickFirst is the first n positions, in the pool's order, that a job
// may use now and that pass ok (nil: all); nil when there are fewer.
func (p *instPool) pickFirst(n int, alone bool, ok func(i int) bool) []int {
	if n <= 0 {
		return []int{}
	}
	var got []int
	for i := range p.st {
		if p.usable(i, alone) && (ok == nil || ok(i)) {
			got = append(got, i)
			if len(got) == n {
				return got
			}
		}
	}
	return nil
}

// namedPool is a pool of named instances, each held by one job at a
// time: a host's instances of a resource, or those a claim holds.
type namedPool struct {
	instPool
	names []string
}

func newNamedPool(names []string) *namedPool {
	return &namedPool{instPool: newInstPool(len(names)), names: names}
}

// holdName marks the instance named held; false when the pool has no
// such instance.
func (np *namedPool) holdName(name string) bool {
	i := slices.Index(np.names, name)
	if i < 0 {
		return false
	}
	np.hold(i, true)
	return true
}

// give back instances a pick held (placeInsts.take, instances.go).
func (np *namedPool) give(names []string) {
	for _, n := range names {
		if i := slices.Index(np.names, n); i >= 0 {
			np.release(i, np.holders(i) > 1) // each holder holds it alone
		}
	}
}

// instTable is the named instances of a snapshot's hosts and what holds
// them, by host and resource; pools are made as they are first used.
type instTable struct {
	hosts map[string]*Host // the hosts that list instances
	pools map[string]map[string]*namedPool
}

// newInstTable is the table of the hosts' instances, none held; nil when
// no host lists instances.
func newInstTable(hosts []Host) *instTable {
	var t *instTable
	for i := range hosts {
		h := &hosts[i]
		if len(h.Instances) == 0 {
			continue
		}
		if t == nil {
			t = &instTable{hosts: map[string]*Host{}, pools: map[string]map[string]*namedPool{}}
		}
		t.hosts[h.Name] = h
	}
	return t
}

// pool is host's pool of res; nil when the host lists no such instances
// (or t is nil: no host lists any).
func (t *instTable) pool(host, res string) *namedPool {
	if t == nil {
		return nil
	}
	byRes := t.pools[host]
	if np := byRes[res]; np != nil {
		return np
	}
	h := t.hosts[host]
	if h == nil {
		return nil
	}
	names, ok := h.Instances[res]
	if !ok {
		return nil
	}
	if byRes == nil {
		byRes = map[string]*namedPool{}
		t.pools[host] = byRes
	}
	np := newNamedPool(names)
	byRes[res] = np
	return np
}

// holdAllocs charges the instances the allocations name (running jobs,
// claims), but those of the jobs in skip.
func (t *instTable) holdAllocs(as []Alloc, skip map[JobKey]bool) {
	if t == nil {
		return
	}
	for _, a := range as {
		if skip[a.Job] {
			continue
		}
		for _, ha := range a.Hosts {
			t.holdHost(ha.Host, ha.Instances)
		}
	}
}

// holdHost charges instances named on one host.
func (t *instTable) holdHost(host string, inst map[string][]string) {
	for res, names := range inst {
		if np := t.pool(host, res); np != nil {
			for _, n := range names {
				np.holdName(n)
			}
		}
	}
}
