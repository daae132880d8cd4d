package sched

// pendApply is a job's charges to apply (sign 1) or take back (-1).
type pendApply struct {
	j    *ledgerJob
	sign int
}

// applyPending applies the charges the sync's starts and ends left
// (Ledger.pend), in their order on each host, and hands the ended jobs'
// records to the next starts.
func (l *Ledger) applyPending() {
	for _, p := range l.pend {
		for i := range p.j.on {
			l.free += l.apply(&p.j.on[i], p.j, p.sign)
		}
		// After its slots: a host's resources follow the same jobs'
		// charges in the same order (exact sums in any case).
		for _, rc := range p.j.res {
			l.hs[rc.h].avail[rc.ri] -= float64(p.sign) * rc.amt
		}
	}
	clear(l.pend)
	l.pend = l.pend[:0]
	for _, j := range l.ended {
		j.on, j.res = j.on[:0], j.res[:0]
		l.spare = append(l.spare, j)
	}
	clear(l.ended)
	l.ended = l.ended[:0]
}

// restoreAll restores every host and sets its values.
func (c *cycle) restoreAll(slotsIdx, maxIdx int) {
	clear(c.ledger.cyc.stale) // every host's values set now
	for h := range c.hosts {
		c.restoreHostVals(h, slotsIdx, maxIdx)
	}
}
