package sched

import (
	"math"

	"xce/lib/resreq"
)

// parFillMin is the hosts of a placement from which fillPlaced writes
// its allocations on two goroutines: off, as parMin (ledgerpar.go).
var parFillMin = math.MaxInt

// fillPlaced appends to out the allocations of a one-part placement on
// hosts without devices, and their host indices to c.placedIdx: each
// allocation is its pick's host and slots, the part's rusage, the first
// the lead. A large placement's are written in parts on two goroutines
// (each its own range of out), the same allocations in the same order.
func (c *cycle) fillPlaced(out []HostAlloc, picks []pick, set resreq.UsageSet) []HostAlloc {
	base, n := len(out), len(picks)
	out = out[:base+n]
	ib := len(c.placedIdx)
	if cap(c.placedIdx) < ib+n {
		c.placedIdx = append(c.placedIdx[:ib], make([]int, n)...)
	}
	idx := c.placedIdx[:ib+n]
	c.placedIdx = idx
	parts := 1
	if n >= parFillMin {
		parts = partsFor(n)
	}
	if parts == 1 {
		c.fillRange(out[base:], picks, idx[ib:], set, 0, n)
		return out
	}
	runParts(parts, func(k int) { c.fillRange(out[base:], picks, idx[ib:], set, k*n/parts, (k+1)*n/parts) })
	return out
}

// fillRange writes the allocations of picks[lo:hi].
func (c *cycle) fillRange(out []HostAlloc, picks []pick, idx []int, set resreq.UsageSet, lo, hi int) {
	hosts := c.s.Hosts // the cycle's hosts are the snapshot's, by index
	for k := lo; k < hi; k++ {
		pk := picks[k]
		out[k] = HostAlloc{Host: hosts[pk.h].Name, Slots: pk.n, Rusage: set, Lead: k == 0}
		idx[k] = pk.h
	}
}
