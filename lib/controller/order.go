package controller

import (
	"slices"

	"xce/lib/api"
)

// The job list in bjobs's order, kept between queries so that a listing
// walks it instead of sorting every job: running and suspended jobs, then
// pending jobs by queue priority, user priority and dispatch order, then
// finished jobs in the order they finished; ties by id and index.
//
// It is maintained lazily. insert and clean say which records came and
// went; a record that changed is found by its job or effective spec having
// been replaced (both are immutable and replaced on change). A query first
// brings the list up to date (c.mu held): one pass drops what went or
// changed, the changed and the new are sorted among themselves and merged
// in. With nothing changed that is one pass over the list; a full sort
// happens only when the queues' priorities changed (reconfiguration) or
// more changed than the list holds.
type jobOrder struct {
	built   bool
	list    []orderEntry
	prios   map[string]int32 // each queue's priority the list is sorted by
	added   []*rec
	removed map[*api.Job]bool // records dropped by clean, by their last job
}

// orderEntry is one record in the list with its sort key as of when it
// was placed: job and eff say whether the record changed since.
type orderEntry struct {
	key orderKey
	r   *rec
	job *api.Job
	eff *effSpec
}

type orderKey struct {
	group        int8 // 0 running or suspended, 1 pending, 2 finished
	qprio, uprio int32
	idx          int32
	seq          int64 // dispatch order (pending) or end time (finished)
	id           int64
}

func (a *orderKey) less(b *orderKey) bool {
	if a.group != b.group {
		return a.group < b.group
	}
	if a.qprio != b.qprio {
		return a.qprio > b.qprio
	}
	if a.uprio != b.uprio {
		return a.uprio > b.uprio
	}
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return a.idx < b.idx
}

func compareKeys(a, b *orderKey) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// orderKeyOf is a record's place in bjobs's order (c.mu held).
func (c *Controller) orderKeyOf(r *rec) orderKey {
	j := r.job
	k := orderKey{group: int8(listGroup(j.State)), id: j.JobId, idx: j.ArrayIndex}
	switch k.group {
	case 1:
		k.qprio, k.uprio, k.seq = c.queuePrio(r), r.eff.GetUserPriority(), j.Order
	case 2:
		// As OpenLava's mbatchd keeps its finished-job list (FJL), not by
		// id.
		k.seq = j.EndTime
	}
	return k
}

// ordered records a new record for the list (c.mu held).
func (c *Controller) ordered(r *rec) {
	o := &c.order
	if !o.built {
		return
	}
	o.added = append(o.added, r)
	o.bound()
}

// unordered records that clean dropped the record whose job is j (c.mu
// held).
func (c *Controller) unordered(j *api.Job) {
	o := &c.order
	if !o.built {
		return
	}
	if o.removed == nil {
		o.removed = map[*api.Job]bool{}
	}
	o.removed[j] = true
	o.bound()
}

// bound drops the list when more has changed than it holds: rebuilding
// it then costs no more than merging, and what is pending for it stays
// bounded when nothing queries.
func (o *jobOrder) bound() {
	if len(o.added)+len(o.removed) > len(o.list)+1024 {
		*o = jobOrder{}
	}
}

// jobsInOrder brings the list up to date and returns it; the caller may
// read it until it releases c.mu (c.mu held).
func (c *Controller) jobsInOrder() []orderEntry {
	o := &c.order
	if !o.built || !c.samePrios(o.prios) {
		c.rebuildOrder()
		return o.list
	}
	var moved []orderEntry
	kept := o.list[:0]
	for _, e := range o.list {
		if e.r.job == e.job && e.r.eff == e.eff && (o.removed == nil || !o.removed[e.job]) {
			kept = append(kept, e)
			continue
		}
		if !o.removed[e.r.job] {
			moved = append(moved, c.entryOf(e.r))
		}
	}
	for _, r := range o.added {
		if !o.removed[r.job] {
			moved = append(moved, c.entryOf(r))
		}
	}
	o.added, o.removed = o.added[:0], nil
	if len(moved) == 0 {
		o.list = kept
		return o.list
	}
	slices.SortFunc(moved, func(a, b orderEntry) int { return compareKeys(&a.key, &b.key) })
	o.list = mergeEntries(kept, moved)
	return o.list
}

func (c *Controller) entryOf(r *rec) orderEntry {
	return orderEntry{key: c.orderKeyOf(r), r: r, job: r.job, eff: r.eff}
}

// rebuildOrder sorts every record afresh (c.mu held).
func (c *Controller) rebuildOrder() {
	list := make([]orderEntry, 0, len(c.jobs)+len(c.jobs)/8)
	for _, r := range c.jobs {
		list = append(list, c.entryOf(r))
	}
	slices.SortFunc(list, func(a, b orderEntry) int { return compareKeys(&a.key, &b.key) })
	prios := make(map[string]int32, len(c.queues))
	for name, q := range c.queues {
		prios[name] = q.q.Priority
	}
	c.order = jobOrder{built: true, list: list, prios: prios}
}

// samePrios reports whether the queues' priorities are still those of
// prios (c.mu held).
func (c *Controller) samePrios(prios map[string]int32) bool {
	if len(prios) != len(c.queues) {
		return false
	}
	for name, q := range c.queues {
		if p, ok := prios[name]; !ok || p != q.q.Priority {
			return false
		}
	}
	return true
}

// mergeEntries merges two sorted lists. kept is a prefix of the list's
// own array, whose room past it is reused when the result fits.
func mergeEntries(kept, moved []orderEntry) []orderEntry {
	n := len(kept) + len(moved)
	var out []orderEntry
	if cap(kept) >= n {
		// Merge from the back so that kept's entries are read before the
		// slots they occupy are written.
		out = kept[:n]
		i, j := len(kept)-1, len(moved)-1
		for k := n - 1; j >= 0; k-- {
			if i >= 0 && moved[j].key.less(&out[i].key) {
				out[k] = out[i]
				i--
			} else {
				out[k] = moved[j]
				j--
			}
		}
		return out
	}
	out = make([]orderEntry, 0, n+n/8)
	i, j := 0, 0
	for i < len(kept) && j < len(moved) {
		if moved[j].key.less(&kept[i].key) {
			out = append(out, moved[j])
			j++
		} else {
			out = append(out, kept[i])
			i++
		}
	}
	out = append(out, kept[i:]...)
	return append(out, moved[j:]...)
}
