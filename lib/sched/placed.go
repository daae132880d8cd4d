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
// when has is its last placement, else by name (a running job's).
func (c *cycle) hostOf(has []HostAlloc, k int) (int, bool) {
	if c.placedAt == &has[0] && len(has) == len(c.placedIdx) {
		if h := c.placedIdx[k]; c.hosts[h].h.Name == has[k].Host {
			return h, true
		}
	}
	h, ok := c.byName[has[k].Host]
	return h, ok
}
