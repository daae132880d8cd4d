package sched

// The hosts of the placement place made last, by index, for commit: it
// charges each host of the placement (account, backfills), and looking
// each name up again cost more than the placement's walk on a large
// cluster.

// notePlaced records the host index of each of out's allocations
// (c.placedIdx, filled by place in out's order).
func (c *cycle) notePlaced(out []HostAlloc) {
	c.placedAt = nil
	if len(out) > 0 && len(out) == len(c.placedIdx) {
		c.placedAt = &out[0]
	}
}

// hostOf returns the index of host has[k].Host: the one place picked
// when has is its last placement, else by name (a running job's). The
// last placement's list is the one place wrote from those indices, and
// nothing writes it before its commit: its names need no check (which
// read each host's record a second time).
func (c *cycle) hostOf(has []HostAlloc, k int) (int, bool) {
	if c.placedAt == &has[0] && len(has) == len(c.placedIdx) {
		return c.placedIdx[k], true
	}
	h, ok := c.byName[has[k].Host]
	return h, ok
}

// ledgerHint is a placement of the last cycle, for the ledger's start of
// the job: the host indices place picked (Ledger.hintIdx[off:off+n])
// for the allocations that begin at at.
type ledgerHint struct {
	at     *HostAlloc
	off, n int
	end    int64 // the end the commit charged its hosts' uses
	excl   bool  // the commit charged it exclusive
}

// hintPlaced gives the ledger the host indices of a placement the cycle
// committed: the caller starts the job with the placement's hosts (the
// same slice), and the ledger's start then need not look each name up.
func (c *cycle) hintPlaced(has []HostAlloc, end int64, excl bool) {
	l := c.ledger
	if l == nil || len(has) == 0 || c.placedAt != &has[0] || len(has) != len(c.placedIdx) {
		return
	}
	l.hints = append(l.hints, ledgerHint{at: &has[0], off: len(l.hintIdx), n: len(has), end: end, excl: excl})
	l.hintIdx = append(l.hintIdx, c.placedIdx...)
}

// hinted returns the host indices the last cycle gave for a job's hosts
// (in the order the caller starts the placements, as it mostly does),
// nil when none, and the end and exclusiveness its commit charged.
func (l *Ledger) hinted(hosts []HostAlloc) ([]int, int64, bool) {
	if len(hosts) == 0 {
		return nil, 0, false
	}
	// A placement the caller did not start (or a gang's undone trial)
	// is passed over.
	for k := l.hintPos; k < len(l.hints) && k < l.hintPos+4; k++ {
		if hn := l.hints[k]; hn.at == &hosts[0] && hn.n == len(hosts) {
			l.hintPos = k + 1
			return l.hintIdx[hn.off : hn.off+hn.n], hn.end, hn.excl
		}
	}
	return nil, 0, false
}

// dropHints forgets the last cycle's hints (after the sync that read
// them).
func (l *Ledger) dropHints() {
	clear(l.hints) // the placements' pointers
	l.hints, l.hintIdx, l.hintPos = l.hints[:0], l.hintIdx[:0], 0
}
