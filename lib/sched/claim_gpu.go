package sched

import (
	"maps"
	"slices"
	"strconv"
)

// Claims of GPU devices: a claim's rusage[ngpus_physical=N] on a host
// that lists its devices holds N devices no job uses, alone. It names
// them as instances of ngpus_physical (their indices, "0", "3"), so the
// controller keeps them as it keeps any claim's instances; the claim's
// running allocation holds them as a GPU allocation of its own. A job of
// the claim is given devices from them, one job per device: its -gpu
// num per host (per task), or what its rusage of ngpus_physical
// reserves, among the devices its gmodel and gmem accept, as its
// HostAlloc.GPU. On a host without a device list ngpus_physical is a
// counter, claimed as any other.

// claimDevices turns a claim's held ngpus_physical instances into the
// GPU allocation its running allocation holds.
func claimDevices(h *HostAlloc) {
	names := h.Instances[ngpusPhysical]
	if len(names) == 0 {
		return
	}
	ins := maps.Clone(h.Instances)
	delete(ins, ngpusPhysical)
	if len(ins) == 0 {
		ins = nil
	}
	h.Instances = ins
	h.GPU = &GPUAlloc{Devices: deviceIndices(names), Exclusive: true}
}

// deviceIndices are device names (GPU.Index as text) as indices,
// ascending; names that are not numbers are left out.
func deviceIndices(names []string) []int {
	out := make([]int, 0, len(names))
	for _, n := range names {
		if i, err := strconv.Atoi(n); err == nil {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// holdsDevices reports whether a pending claim's rusage names
// ngpus_physical.
func holdsDevices(cl *Claim) bool {
	for _, u := range cl.Rusage {
		for _, r := range u.Resources {
			if r.Name == ngpusPhysical {
				return true
			}
		}
	}
	return false
}

// withDevices adds to t the device pools of the hosts that list
// devices (named by index), holding those v shows a job or claim uses;
// t may be nil.
func (t *instTable) withDevices(hosts []Host, v *View) *instTable {
	if t == nil {
		t = &instTable{hosts: map[string]*Host{}, pools: map[string]map[string]*namedPool{}}
	}
	for i := range hosts {
		h := &hosts[i]
		if len(h.GPUs) == 0 {
			continue
		}
		names := make([]string, 0, len(h.GPUs))
		for _, d := range h.GPUs[:min(len(h.GPUs), maxGPUs)] {
			names = append(names, strconv.Itoa(d.Index))
		}
		np := newNamedPool(names)
		for _, g := range v.Hosts[h.Name].GPUs {
			if g.Jobs > 0 || g.Exclusive {
				np.holdName(strconv.Itoa(g.Index))
			}
		}
		if t.pools[h.Name] == nil {
			t.pools[h.Name] = map[string]*namedPool{}
		}
		t.pools[h.Name][ngpusPhysical] = np
	}
	return t
}

// claimGPUs sets up a held claim's devices: the pool its jobs take
// from, and each device as its host lists it.
func (cs *claimState) claimGPUs(hosts []Host) {
	if cs.insts[ngpusPhysical] == nil {
		return
	}
	cs.devs = map[string]*GPU{}
	for i := range hosts {
		if hosts[i].Name != cs.c.Held.Host {
			continue
		}
		for k := range hosts[i].GPUs {
			d := &hosts[i].GPUs[k]
			cs.devs[strconv.Itoa(d.Index)] = d
		}
	}
}

// takeGPU has the claim serve the job's -gpu from its devices, when it
// holds devices: the cycle places the job without it.
func (cj *claimJob) takeGPU(j *Job) {
	if j.GPU == nil || cj.cl.insts[ngpusPhysical] == nil {
		return
	}
	cj.gpu = &gpuNeed{GPUReq: *j.GPU}
	j.GPU = nil
}

// useGPU charges a running job's devices to its claim's pool; it
// returns whether the claim holds them (the job's allocation then
// leaves them to the claim's).
func (cs *claimState) useGPU(ha *HostAlloc) bool {
	np := cs.insts[ngpusPhysical]
	if np == nil || ha.GPU == nil {
		return false
	}
	for _, idx := range ha.GPU.Devices {
		np.holdName(strconv.Itoa(idx))
	}
	return true
}

// pickDevices is the devices (names) of the claim for a placement of its
// job with a -gpu: its num on the claim's host, at least n (its rusage),
// among those its model and memory accept; nil when too few are free.
func (cj *claimJob) pickDevices(p *Placement, n int) []string {
	cs := cj.cl
	slots := 0
	for i := range p.Hosts {
		if p.Hosts[i].Host == cs.c.Held.Host {
			slots += p.Hosts[i].Slots
		}
	}
	np := cs.insts[ngpusPhysical]
	return np.pickNames(max(n, cj.gpu.perHost(max(1, slots))), func(i int) bool {
		d := cs.devs[np.names[i]]
		return d != nil && cj.gpu.matches(d)
	})
}

// gpuAlloc is the GPU allocation of a claim's job given devices.
func (cj *claimJob) gpuAlloc(names []string) *GPUAlloc {
	g := &GPUAlloc{Devices: deviceIndices(names)}
	if cj.gpu != nil {
		g.Exclusive, g.Mem = cj.gpu.Exclusive, cj.gpu.Mem
	}
	return g
}
