package sched

import (
	"strings"

	"xce/lib/resreq"
)

// Static host checks kept between cycles. With a ledger bound to the
// snapshot's hosts (the caller resets it when a host changes), a
// requirement's static checks (state, queue hosts, -m, select, in
// order[] order) give the same hosts as last cycle's as long as they
// read no value a cycle writes (free slots, resources net of running
// jobs' reservations): the next cycle takes them as they are instead of
// running select over every host again.

// keepable reports whether part p's static checks may be kept or taken
// from an earlier cycle.
func (c *cycle) keepable(b *bucket, s *resreq.Simple, p *part) bool {
	if c.ledger == nil || c.adv != nil || p.gpu != nil || len(s.Same) > 0 || b.rsv != nil {
		return false
	}
	if c.written(s.Select) {
		return false
	}
	ord := s.Order
	if ord == nil {
		ord = &resreq.DefaultOrder
	}
	for _, k := range ord.Keys {
		if c.writes(k.Name) {
			return false
		}
	}
	return true
}

// keepKey is a static's key among the ledger's: the cycle's key and the
// queue's hosts, which a later snapshot may change.
func keepKey(key string, b *bucket) string {
	return key + "\x00" + strings.Join(b.q.q.Hosts, "\x00")
}

// keptStatic returns the static checks an earlier cycle kept for key.
func (c *cycle) keptStatic(key string, b *bucket, s *resreq.Simple, p *part) (*static, bool) {
	if !c.keepable(b, s, p) {
		return nil, false
	}
	st, ok := c.ledger.statics[keepKey(key, b)]
	return st, ok
}

// keepStatic keeps a static for the next cycles where they may take it.
func (c *cycle) keepStatic(key string, b *bucket, s *resreq.Simple, p *part, st *static) {
	if c.keepable(b, s, p) {
		c.ledger.statics[keepKey(key, b)] = st
	}
}

// writes reports whether a cycle writes resource name in the values
// select and order read: the free and total slots, the resources running
// jobs reserve, the free GPUs.
func (c *cycle) writes(name string) bool {
	r, i, ok := c.schema.Lookup(name)
	if !ok || r.Kind != resreq.Numeric {
		return false
	}
	switch r.Name {
	case "slots", "maxslots", ngpusPhysical:
		return true
	}
	for _, info := range c.resInfo {
		if info.num == i {
			return true
		}
	}
	return false
}

// written reports whether a select expression reads a value a cycle
// writes.
func (c *cycle) written(e resreq.Expr) bool {
	switch x := e.(type) {
	case nil:
		return false
	case *resreq.Ident:
		return c.writes(x.Name)
	case *resreq.Defined:
		return c.writes(x.Name)
	case *resreq.Paren:
		return c.written(x.X)
	case *resreq.Unary:
		return c.written(x.X)
	case *resreq.Binary:
		return c.written(x.X) || c.written(x.Y)
	}
	return false
}

// orderNotWritten reports whether no key of o is a value cycles write.
func (c *cycle) orderNotWritten(o *resreq.Order) bool {
	for _, k := range o.Keys {
		if c.writes(k.Name) {
			return false
		}
	}
	return true
}

// keptOrder returns the hosts' order by o that an earlier cycle kept.
func (c *cycle) keptOrder(k string, o *resreq.Order) ([]int, bool) {
	if c.ledger == nil || !c.orderNotWritten(o) {
		return nil, false
	}
	idx, ok := c.ledger.orders[k]
	return idx, ok
}

// keepOrder keeps the hosts' order by o for the next cycles where they
// may take it.
func (c *cycle) keepOrder(k string, o *resreq.Order, idx []int) {
	if c.ledger != nil && c.orderNotWritten(o) {
		c.ledger.orders[k] = idx
	}
}

// keptSet returns a host list's set (queue hosts, -m) that an earlier
// cycle kept: the hosts and host groups are the same while the ledger
// is bound.
func (c *cycle) keptSet(key string) ([]bool, bool) {
	if c.ledger == nil {
		return nil, false
	}
	s, ok := c.ledger.sets[key]
	return s, ok
}

func (c *cycle) keepSet(key string, set []bool) {
	if c.ledger != nil {
		c.ledger.sets[key] = set
	}
}

// ints returns an empty list with room for n hosts, for the cycle's own
// use: with a ledger, from memory the cycles reuse (a list of every host
// for each requirement placed is the largest allocation of a cycle).
func (c *cycle) ints(n int) []int {
	if c.ledger == nil {
		return make([]int, 0, n)
	}
	a := c.ledger.arena
	if cap(a)-len(a) < n {
		// A new block; lists in the old one keep it while they live.
		a = make([]int, 0, max(4*n, 2*cap(a)))
	}
	c.ledger.arena = a[:len(a)+n]
	return a[len(a) : len(a) : len(a)+n]
}

// defaults is resreq.Defaults of a job's requirement req (r: req, or an
// empty one for nil), kept with the ledger for the next cycles' jobs
// that share req.
func (c *cycle) defaults(req, r *resreq.ResReq) *resreq.ResReq {
	if c.ledger == nil {
		return resreq.Defaults(r)
	}
	d, ok := c.ledger.defaults[req]
	if !ok {
		d = resreq.Defaults(r)
		c.ledger.defaults[req] = d
	}
	return d
}

// simpleString is s.String(), kept with the ledger for the next cycles.
func (c *cycle) simpleString(s *resreq.Simple) string {
	if c.ledger == nil {
		return s.String()
	}
	str, ok := c.ledger.simple[s]
	if !ok {
		str = s.String()
		c.ledger.simple[s] = str
	}
	return str
}
