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
		// Field by field: a struct literal is built on the stack and
		// copied in 16-byte moves, each of which waits for the two
		// 8-byte stores it reads back.
		ha := &out[base+k]
		ha.Host, ha.Slots, ha.Rusage, ha.Lead = hosts[pk.h].Name, pk.n, set, k == 0
		ha.Used, ha.GPU, ha.CPUs, ha.Instances = nil, nil, nil, nil
		idx[ib+k] = pk.h
	}
	return out
}
