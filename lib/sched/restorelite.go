package sched

import (
	"math"
	"sync/atomic"

	"xce/lib/resreq"
)

// Most hosts an incremental cycle restores are those of the jobs the
// last cycle placed: its commit charged each of them, and the caller
// then started the job, so the ledger charged them the same. Where that
// was all that changed a host — the commit its only change in the last
// cycle, the start its only charge since — the cycle's state of the host
// is the ledger's already: only the values select and order read (the
// free slots, the charged resources) and its open-host bit are set
// again, not its charges copied. TestLiteRestoreSameState compares it
// with the full restore.

// noLiteRestore makes every restore a full one; liteUsed counts the
// hosts restored lightly (tests).
var (
	noLiteRestore bool
	liteUsed      atomic.Int64
)

// restoreHostList restores the hosts of a list for an incremental cycle:
// restoreHost's steps, in one loop (a simulator's cycle restores every
// host of each job started or ended, the calls cost as much as the
// steps).
func (c *cycle) restoreHostList(list []int, slotsIdx, maxIdx int) {
	l := c.ledger
	ic := &l.cyc
	lite, liteOK, lazy := 0, !noLiteRestore, !noLazyVals
	for _, h := range list {
		hs, lh := &c.hosts[h], &l.hs[h]
		if liteOK && l.conf[h] && l.changed.n[h] == 1 && ic.touched.n[h] == 1 && sameCharges(hs, lh) {
			lite++
		} else {
			c.restoreState(h, hs, lh)
		}
		ic.open.setFrom(h, hs)
		// valsLater's steps.
		hs.pre = false
		if lazy {
			ic.stale.set(h)
		} else {
			c.restoreVals(h, ic.slotsIdx, ic.maxIdx)
			ic.stale.clear(h)
		}
	}
	if lite > 0 {
		liteUsed.Add(int64(lite))
	}
}

// sameCharges checks what the ledger's figures make sure of already,
// against a caller that changed the placement's hosts before it started
// the job: the cycle's charges of host h are the ledger's.
func sameCharges(hs *hostState, lh *ledgerHost) bool {
	if hs.used != int(lh.used) || hs.excl != (lh.excl > 0) || len(hs.holds) > 0 ||
		len(hs.uses) != len(lh.uses) || len(hs.avail) != len(lh.avail) ||
		len(lh.uses) > 0 && hs.uses[len(hs.uses)-1] != lh.uses[len(lh.uses)-1] {
		return false
	}
	for i, a := range hs.avail {
		if math.Float64bits(a) != math.Float64bits(lh.avail[i]) {
			return false
		}
	}
	return true
}

// A restored host's values (what select and order read: its free
// slots, the resources charged) are set from its state only when the
// cycle reads them, or before it changes the state (touch): most hosts
// a simulator's cycle restores are those of the jobs that started or
// ended, which no requirement of the next cycle may read. The values
// read are those the restore would have set, since the state is the
// restore's until then.

// noLazyVals makes restores set the values at once (tests).
var noLazyVals bool

// valsLater leaves a restored host's values to be set when read.
func (c *cycle) valsLater(h int) {
	ic := &c.ledger.cyc
	c.hosts[h].pre = false
	if noLazyVals {
		c.restoreVals(h, ic.slotsIdx, ic.maxIdx)
		ic.stale.clear(h)
		return
	}
	ic.stale.set(h)
}

// valsOf returns host h's values as select and order read them.
func (c *cycle) valsOf(h int) *resreq.Host {
	if c.inc && c.ledger.cyc.stale.has(h) {
		c.freshen(h)
	}
	return c.hosts[h].vals
}

// freshen sets a stale host's values from its state.
func (c *cycle) freshen(h int) {
	ic := &c.ledger.cyc
	c.restoreVals(h, ic.slotsIdx, ic.maxIdx)
	ic.stale.clear(h)
	c.hosts[h].pre = false
}

// A stale host that a cycle changes (touch) keeps its values as they
// were before: they are set from its slots used and exclusiveness as the
// change found them, kept in its state (hostState.pre), when the cycle
// reads them, instead of at the change. Most hosts a simulator's cycle
// changes are those its placements fill, whose values no later
// requirement of the cycle reads. Only while no charged resource is one
// the values hold (c.resInfo's num): the restore's values read those
// resources' amounts too, which a change charges.

// noValsBefore makes a change set a stale host's values at once (tests).
var noValsBefore bool

// valsBefore keeps the values of stale host h as its state now gives
// them, before the cycle changes it.
func (c *cycle) valsBefore(h int) {
	hs := &c.hosts[h]
	if hs.pre {
		return // kept at an earlier change
	}
	if noValsBefore || c.valsReadRes() {
		c.freshen(h)
		return
	}
	hs.pre, hs.preUsed, hs.preExcl = true, hs.used, hs.excl
	c.ledger.cyc.nBefore++
}

// valsReadRes reports whether the values hold a charged resource.
func (c *cycle) valsReadRes() bool {
	for i := range c.resInfo {
		if c.resInfo[i].num >= 0 {
			return true
		}
	}
	return false
}

// freshenAll sets the values of the stale hosts of a list (before
// goroutines read them).
func (c *cycle) freshenAll(hosts []int) {
	if !c.inc {
		return
	}
	for _, h := range hosts {
		if c.ledger.cyc.stale.has(h) {
			c.freshen(h)
		}
	}
}

// restoreHostVals restores host h and sets its values now.
func (c *cycle) restoreHostVals(h, slotsIdx, maxIdx int) {
	c.restoreHost(h, slotsIdx, maxIdx)
	c.ledger.cyc.stale.clear(h)
	c.restoreVals(h, slotsIdx, maxIdx)
}

// The hosts' small lists (a host's uses, its queues' slots) start out in
// the host's record (room, qroom), and its values in one block for all
// the hosts, in host order, instead of an allocation each: a job's
// hosts are mostly a run of neighbours, and a host's record with its
// lists is one or two cache lines instead of one each. A list that
// outgrows its room moves out as before. The records are not copied
// (their lists would point into the original's room).

// slabUses is the room each host's uses start with.
const slabUses = 2

// slabHosts gives the ledger's hosts their lists' first room.
func (l *Ledger) slabHosts() {
	for i := range l.hs {
		lh := &l.hs[i]
		lh.uses, lh.queues = lh.room[:0], lh.qroom[:0]
	}
}

// slab gives the kept hosts' uses and values their first room.
func (ic *incHosts) slab(schema *resreq.Schema) {
	n := len(ic.hosts)
	for i := range ic.hosts {
		hs := &ic.hosts[i]
		hs.uses = hs.room[:0]
	}
	if schema == nil {
		return
	}
	nn := len(schema.NewHost().Num)
	nums := make([]float64, nn*n)
	for i := range ic.vals {
		ic.vals[i].Num = nums[nn*i : nn*i : nn*(i+1)]
	}
}
