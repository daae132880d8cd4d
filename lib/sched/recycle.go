package sched

import "math/bits"

// hostAllocPool keeps the Hosts lists of placements the caller handed
// back (Scratch.Recycle) for the next cycles' placements: a simulator
// starts and ends jobs of hundreds of hosts by the million, and making
// each list anew was most of the memory its cycles allocated, and so
// of the collector's work.
type hostAllocPool struct {
	// free[k] holds lists of capacity at least 1<<k.
	free [40][][]HostAlloc
}

// maxPooled bounds the lists kept of each size class.
const maxPooled = 256

// Recycle hands back the Hosts of a placement this scratch's cycles
// made, for a later cycle's placement to reuse: call it once nothing
// reads them any more, when the job has ended and left Snapshot.Running
// (a Ledger told of the end may still read them until its next cycle,
// which takes them before any placement can).
func (sc *Scratch) Recycle(hosts []HostAlloc) {
	c := cap(hosts)
	if sc == nil || c == 0 {
		return
	}
	if sc.allocs == nil {
		sc.allocs = &hostAllocPool{}
	}
	k := bits.Len(uint(c)) - 1 // 1<<k <= c
	if k >= len(sc.allocs.free) || len(sc.allocs.free[k]) >= maxPooled {
		return
	}
	// Kept as they are, not cleared: the placement that takes the list
	// writes each allocation whole and clears what is left of the old
	// ones past its own (clearTail), so that a list's memory is written
	// once a job, not twice (a job's list is some 70 KB in a simulator's
	// large runs, gone from the caches by the time a placement takes it).
	sc.allocs.free[k] = append(sc.allocs.free[k], hosts)
}

// hostAllocs returns an empty list with room for n allocations, a
// recycled one when the scratch has one, else a new one, and the length
// its last placement wrote: allocations there and past the new list's
// length are the caller's to clear (clearTail).
func (c *cycle) hostAllocs(n int) ([]HostAlloc, int) {
	if sc := c.scratch; sc != nil && n > 0 {
		k := bits.Len(uint(n - 1)) // 1<<k >= n
		if k >= len(hostAllocPool{}.free) {
			return make([]HostAlloc, 0, n), 0
		}
		if sc.allocs != nil {
			if f := sc.allocs.free[k]; len(f) > 0 {
				out := f[len(f)-1]
				f[len(f)-1] = nil
				sc.allocs.free[k] = f[:len(f)-1]
				return out[:0], len(out)
			}
		}
		// Room for 1<<k, so that the list, handed back, serves the next
		// lists of n's class: one of n (short of 1<<k) would go back to
		// the class below (Recycle), one n's class never takes, and each
		// job of that size would make its list anew (most of a 100,000-
		// job simulation's allocations, its fresh pages faulted in).
		return make([]HostAlloc, 0, 1<<k), 0
	}
	return make([]HostAlloc, 0, n), 0
}

// clearTail clears the allocations a recycled list held past out's
// length (dirty: the length its last placement wrote), so that a list
// handed out holds nothing past its length, as a new one.
func clearTail(out []HostAlloc, dirty int) {
	if dirty > len(out) && dirty <= cap(out) {
		clear(out[len(out):dirty])
	}
}
