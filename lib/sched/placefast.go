package sched

import "xce/lib/resreq"

// fillPlaced appends to out the allocations of a one-part placement on
// hosts without devices, and their host indices to c.placedIdx: each
// allocation is its pick's host and slots, the part's rusage, the first
// the lead.
func (c *cycle) fillPlaced(out []HostAlloc, picks []pick, set resreq.UsageSet) []HostAlloc {
	base, n := len(out), len(picks)
	out = out[:base+n]
	ib := len(c.placedIdx)
	if cap(c.placedIdx) < ib+n {
		c.placedIdx = append(c.placedIdx[:ib], make([]int, n)...)
	}
	idx := c.placedIdx[:ib+n]
	c.placedIdx = idx
	hosts := c.s.Hosts // the cycle's hosts are the snapshot's, by index
	for k, pk := range picks {
		out[base+k] = HostAlloc{Host: hosts[pk.h].Name, Slots: pk.n, Rusage: set, Lead: k == 0}
		idx[ib+k] = pk.h
	}
	return out
}
