package sched

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

// The open-host index: a set, by host index, of the hosts that may still
// take a slot. A placement walks its part's hosts in order and skips
// runs of hosts that cannot (every slot used, or running an exclusive
// job) a word of the set at a time, instead of asking each for its
// capacity: on a large, busy cluster most hosts are full, and a walk
// that visits them all made each placement cost the cluster's size.
//
// A set bit says "may be open", a clear one "full": a bit is cleared
// only when the host is seen full, and set again whenever the host's
// state is set afresh (a cycle's start, the ledger's restore). Within a
// cycle a full host stays full (placements and holds only take slots)
// except where preemption releases a running job's slots or a gang's
// trial is undone: cycles with either walk every host as before. The
// hosts visited, and so every decision, are those of the plain walk;
// TestOpenIndexSameAsScan compares the two over random clusters.

// openBits is a bit set by host index.
type openBits []uint64

func (o openBits) has(h int) bool { return o[h>>6]&(1<<(uint(h)&63)) != 0 }
func (o openBits) set(h int)      { o[h>>6] |= 1 << (uint(h) & 63) }
func (o openBits) clear(h int)    { o[h>>6] &^= 1 << (uint(h) & 63) }

// next returns the first set bit at or after h, or n (the hosts) when
// none.
func (o openBits) next(h, n int) int {
	w := h >> 6
	if w >= len(o) {
		return n
	}
	x := o[w] >> (uint(h) & 63)
	if x != 0 {
		return min(n, h+bits.TrailingZeros64(x))
	}
	for w++; w < len(o); w++ {
		if o[w] != 0 {
			return min(n, w<<6+bits.TrailingZeros64(o[w]))
		}
	}
	return n
}

// hostFull reports that a host can take no slot, whatever the job: its
// slots are all used, or an exclusive job runs there.
func hostFull(hs *hostState) bool { return hs.excl || hs.used >= hs.h.MaxSlots }

// setFrom sets host h's bit from its state.
func (o openBits) setFrom(h int, hs *hostState) {
	if hostFull(hs) {
		o.clear(h)
	} else {
		o.set(h)
	}
}

// noOpenIndex turns the index off for tests (the plain walk everywhere);
// openUsed counts the cycles that used it (tests).
var (
	noOpenIndex bool
	openUsed    atomic.Int64
)

// openSet returns the cycle's open-host set, nil where placements must
// walk every host (preemption or gangs may release slots in the cycle,
// or a test turned it off).
func (c *cycle) openSet() openBits {
	if c.openOff || noOpenIndex {
		return nil
	}
	if c.open != nil {
		return c.open
	}
	if c.gangs != nil || c.trial != nil || c.free >= math.MaxInt/4 || c.pre != nil && len(c.pre.rel) > 0 {
		c.openOff = true
		return nil
	}
	openUsed.Add(1)
	if c.inc {
		// The ledger's restore keeps the bits with the hosts' states
		// (restoreHost).
		c.open = c.ledger.cyc.open
		return c.open
	}
	n := (len(c.hosts) + 63) >> 6
	var o openBits
	if sc := c.scratch; sc != nil {
		if cap(sc.open) < n {
			sc.open = make(openBits, n)
		}
		o = sc.open[:n]
		clear(o)
	} else {
		o = make(openBits, n)
	}
	for h := range c.hosts {
		if !hostFull(&c.hosts[h]) {
			o.set(h)
		}
	}
	c.open = o
	return o
}

// seekAsc returns the first index k >= lo of the ascending list with
// list[k] >= h, len(list) when none: a guess for a list without gaps,
// then a galloping search.
func seekAsc(list []int, lo, h int) int {
	n := len(list)
	if lo >= n || list[lo] >= h {
		return min(lo, n)
	}
	if g := lo + h - list[lo]; g < n && list[g] == h {
		return g // no gap between: the host is where its number says
	}
	// list[prev] < h <= list[hi] (hi == n: past the end).
	prev, step, hi := lo, 1, n
	for prev+step < n {
		if list[prev+step] >= h {
			hi = prev + step
			break
		}
		prev += step
		step *= 2
	}
	k, _ := slices.BinarySearch(list[prev+1:hi], h)
	return prev + 1 + k
}

// ascending reports whether a host list is in increasing order.
func ascending(list []int) bool {
	for i := 1; i < len(list); i++ {
		if list[i] <= list[i-1] {
			return false
		}
	}
	return true
}
