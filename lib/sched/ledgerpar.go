package sched

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// The ledger's per-host work on a large cluster, on more than one core:
// the charges a sync applies to the hosts and the restore of the cycle's
// host states from them. Each host's work reads and writes that host's
// state only (and its word of the open-host set), so the hosts are split
// into parts by blocks of 64 (block b in part b mod nParts), and each
// part applies its hosts' charges in the order the caller made them: a
// host ends up exactly as when one goroutine does it all.
// TestLedgerParallelSameState compares the two.

// nParts is the number of parts the hosts are split into: more than the
// goroutines, so that one that gets its core late leaves its parts to
// the other.
const nParts = 4

// parMin is the per-host operations under which one goroutine does the
// work; tests lower it. Off (no sync is that large): on two shared cores
// a 100,000-job simulation took some 10 % more CPU and wall time split
// than on one goroutine (the other core reads the hosts this one just
// wrote, line by line, and waits to be woken), so the split is kept for
// machines where it pays, measured there first.
var parMin = math.MaxInt

// pendApply is a job's charges to apply (sign 1) or take back (-1).
type pendApply struct {
	j    *ledgerJob
	sign int
}

// ledgerPart is one part's work and result: its charges (index in
// Ledger.pend, index in the job's), or its hosts to restore; the free
// slots it changed and the hosts it changed first.
type ledgerPart struct {
	charges [][2]int32
	hosts   []int
	free    int
	changed []int
}

// partsFor returns how many parts n per-host operations are split into.
func partsFor(n int) int {
	if n < parMin || runtime.GOMAXPROCS(0) < 2 {
		return 1
	}
	return nParts
}

// partOf returns the part of host h.
func partOf(h int) int { return (h >> 6) & (nParts - 1) }

// runParts runs f for each part, on this goroutine and one more: each
// takes the next part not yet taken, and runParts returns when all are
// done.
func runParts(parts int, f func(k int)) {
	if parts <= 1 {
		f(0)
		return
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	wg.Add(parts)
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			if k >= parts {
				return
			}
			f(k)
			wg.Done()
		}
	}
	go work()
	work()
	wg.Wait()
}

// applyPending applies the charges the sync's starts and ends left
// (Ledger.pend), in their order on each host, and hands the ended jobs'
// records to the next starts.
func (l *Ledger) applyPending() {
	n := 0
	for _, p := range l.pend {
		n += len(p.j.on)
	}
	parts := partsFor(n)
	for len(l.parts) < parts {
		l.parts = append(l.parts, ledgerPart{})
	}
	if parts == 1 {
		// No closure, no copy: a small sync allocates nothing.
		for _, p := range l.pend {
			for i := range p.j.on {
				l.free += l.apply(&p.j.on[i], p.j, p.sign, &l.changed)
			}
		}
	} else {
		// Each part's charges listed first, in order: the parts then
		// read only their own.
		for k := range parts {
			l.parts[k].charges = l.parts[k].charges[:0]
		}
		for pi, p := range l.pend {
			for i := range p.j.on {
				lp := &l.parts[partOf(int(p.j.on[i].h))]
				lp.charges = append(lp.charges, [2]int32{int32(pi), int32(i)})
			}
		}
		runParts(parts, func(k int) {
			lp := &l.parts[k]
			lp.changed, lp.free = lp.changed[:0], 0
			for _, c := range lp.charges {
				p := &l.pend[c[0]]
				lp.free += l.apply(&p.j.on[c[1]], p.j, p.sign, &lp.changed)
			}
		})
		for k := range parts {
			l.free += l.parts[k].free
			l.changed = append(l.changed, l.parts[k].changed...)
		}
	}
	clear(l.pend)
	l.pend = l.pend[:0]
	for _, j := range l.ended {
		clear(j.on) // drop the charges' resource lists
		j.on = j.on[:0]
		l.spare = append(l.spare, j)
	}
	clear(l.ended)
	l.ended = l.ended[:0]
}

// restoreList restores the hosts of a list (no host twice).
func (c *cycle) restoreList(list []int, slotsIdx, maxIdx int) {
	parts := partsFor(len(list))
	if parts == 1 {
		c.restoreHostList(list, slotsIdx, maxIdx)
		return
	}
	l := c.ledger
	for len(l.parts) < parts {
		l.parts = append(l.parts, ledgerPart{})
	}
	for k := range parts {
		l.parts[k].hosts = l.parts[k].hosts[:0]
	}
	for _, h := range list {
		lp := &l.parts[partOf(h)]
		lp.hosts = append(lp.hosts, h)
	}
	runParts(parts, func(k int) {
		c.restoreHostList(l.parts[k].hosts, slotsIdx, maxIdx)
	})
}

// restoreAll restores every host.
func (c *cycle) restoreAll(slotsIdx, maxIdx int) {
	parts := partsFor(len(c.hosts))
	clear(c.ledger.cyc.stale) // every host's values set now
	if parts == 1 {
		for h := range c.hosts {
			c.restoreHostVals(h, slotsIdx, maxIdx)
		}
		return
	}
	runParts(parts, func(k int) {
		for b := k << 6; b < len(c.hosts); b += parts << 6 {
			for h := b; h < min(b+64, len(c.hosts)); h++ {
				c.restoreHostVals(h, slotsIdx, maxIdx)
			}
		}
	})
}
