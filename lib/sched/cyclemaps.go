package sched

import "xce/lib/resreq"

// cycleMaps are a cycle's maps and queue states, kept with the scratch
// memory for the caller's next cycle: emptied, not made anew (a
// simulator runs a cycle per event, and making them was a tenth of its
// cycles' cost).
type cycleMaps struct {
	resIdx  map[string]int
	shared  map[string]float64
	queues  map[string]*qstate
	buckets map[string]*bucket
	orders  map[string][]int
	sets    map[string][]bool
	reqStr  map[*resreq.ResReq]string
	statics map[string]*static
	jobsOf  map[string][]int
	fast    map[fastKey]*bucket
	qs      map[string]*qstate // the queues' states by name, for the next cycle
	pre     *preState
	// The placements' buffers (open.go, placed.go), read only within
	// a cycle.
	pickBuf   []pick
	keptBuf   []int
	placedIdx []int
	keyBuf    []byte // slowBucket's keys
	// The buckets' and parts' structs (newBucketObj).
	bslab slab[bucket]
	pslab slab[part]
}

// makeMaps gives the cycle its maps: the scratch's of the last cycle,
// emptied, or new ones.
func (c *cycle) makeMaps(sc *Scratch) {
	if sc == nil {
		c.resIdx, c.shared, c.queues = map[string]int{}, map[string]float64{}, map[string]*qstate{}
		c.buckets, c.orders, c.sets = map[string]*bucket{}, map[string][]int{}, map[string][]bool{}
		c.reqStr, c.statics, c.jobsOf = map[*resreq.ResReq]string{}, map[string]*static{}, map[string][]int{}
		return
	}
	m := sc.maps
	if m == nil {
		m = &cycleMaps{resIdx: map[string]int{}, shared: map[string]float64{}, queues: map[string]*qstate{},
			buckets: map[string]*bucket{}, orders: map[string][]int{}, sets: map[string][]bool{},
			reqStr: map[*resreq.ResReq]string{}, statics: map[string]*static{}, jobsOf: map[string][]int{},
			fast: map[fastKey]*bucket{}, qs: map[string]*qstate{}}
		sc.maps = m
	}
	clear(m.resIdx)
	clear(m.shared)
	clear(m.queues)
	clear(m.buckets)
	clear(m.orders)
	clear(m.sets)
	clear(m.reqStr)
	clear(m.statics)
	clear(m.fast)
	for q, jobs := range m.jobsOf {
		m.jobsOf[q] = jobs[:0] // a queue without jobs reads an empty list
	}
	c.resIdx, c.shared, c.queues = m.resIdx, m.shared, m.queues
	c.buckets, c.orders, c.sets = m.buckets, m.orders, m.sets
	c.reqStr, c.statics, c.jobsOf, c.fast = m.reqStr, m.statics, m.jobsOf, m.fast
	c.pickBuf, c.keptBuf, c.placedIdx = m.pickBuf[:0], m.keptBuf[:0], m.placedIdx[:0]
	c.keyBuf = m.keyBuf[:0]
	m.bslab.n, m.pslab.n = 0, 0
	c.pool = m
}

// slab keeps structs in blocks from one cycle to the next: take returns
// the next one (as it was left: the caller sets every field), and the
// cycle's start sets n back to 0.
type slab[T any] struct {
	blocks [][]T
	n      int // those the cycle took
}

// slabBlock is the number of structs a block of a slab holds.
const slabBlock = 64

func (s *slab[T]) take() *T {
	k := s.n
	s.n++
	if k/slabBlock == len(s.blocks) {
		s.blocks = append(s.blocks, make([]T, slabBlock))
	}
	return &s.blocks[k/slabBlock][k%slabBlock]
}

// newBucketObj returns a bucket struct for the cycle to set: the
// scratch's, kept from the last cycles (a cycle makes its buckets anew,
// and a simulator a cycle per event), or a new one. Nothing keeps a
// bucket or a part past its cycle.
func (c *cycle) newBucketObj() *bucket {
	if c.pool == nil {
		return &bucket{}
	}
	return c.pool.bslab.take()
}

// newPartObj is newBucketObj for a part.
func (c *cycle) newPartObj() *part {
	if c.pool == nil {
		return &part{}
	}
	return c.pool.pslab.take()
}

// keepBufs gives the scratch the cycle's buffers, grown as they were,
// for the next cycle.
func (c *cycle) keepBufs() {
	if m := c.pool; m != nil {
		m.pickBuf, m.keptBuf, m.placedIdx = c.pickBuf[:0], c.keptBuf[:0], c.placedIdx[:0]
		m.keyBuf = c.keyBuf[:0]
	}
}

// newQState returns queue q's empty state for this cycle.
func (c *cycle) newQState(q *Queue) *qstate {
	if c.pool == nil {
		return &qstate{q: q, uused: map[string]int{}, run: map[string]float64{}, slots: map[string]int{}}
	}
	qs := c.pool.qs[q.Name]
	if qs == nil {
		qs = &qstate{uused: map[string]int{}, run: map[string]float64{}, slots: map[string]int{}}
		c.pool.qs[q.Name] = qs
	}
	clear(qs.uused)
	clear(qs.run)
	clear(qs.slots)
	*qs = qstate{q: q, uused: qs.uused, run: qs.run, slots: qs.slots}
	return qs
}

// newPreState returns the cycle's empty preemption state.
func (c *cycle) newPreState() *preState {
	if c.pool == nil {
		return &preState{resOf: map[string]bool{}, qprio: map[string]int{}, susp: map[string][]int{}, gone: map[int]bool{}, taken: map[int]bool{}}
	}
	ps := c.pool.pre
	if ps == nil {
		ps = &preState{resOf: map[string]bool{}, qprio: map[string]int{}, susp: map[string][]int{}, gone: map[int]bool{}, taken: map[int]bool{}}
		c.pool.pre = ps
	}
	clear(ps.resOf)
	clear(ps.qprio)
	clear(ps.susp)
	clear(ps.gone)
	clear(ps.taken)
	*ps = preState{resOf: ps.resOf, qprio: ps.qprio, susp: ps.susp, gone: ps.gone, taken: ps.taken}
	return ps
}

// cycle returns the cycle the scratch's caller ran last, to be set
// afresh (its struct is made once, not per cycle), or a new one without
// a scratch. Nothing keeps a cycle once Schedule has returned.
func (sc *Scratch) cycle() *cycle {
	if sc == nil {
		return &cycle{}
	}
	if sc.cyc == nil {
		sc.cyc = &cycle{}
	}
	return sc.cyc
}
