package resreq

import "fmt"

// DefaultOrder is the order LSF uses when none is given: order[r15s:pg].
var DefaultOrder = Order{Keys: []OrderKey{{Name: "r15s"}, {Name: "pg"}}}

// Orderer is a compiled order[] section.
type Orderer struct {
	keys []orderKey
}

type orderKey struct {
	index int
	asc   bool // low values first
}

// CompileOrder compiles an order section against the schema. A nil order
// compiles to DefaultOrder.
//
// Each resource sorts best first by default: low values first for
// resources that grow with load (r15s, r1m, r15m, ut, pg, io, ls and site
// resources marked Increasing), high values first for the others (mem,
// swp, tmp, it, slots, ncpus, ...). A '-' reverses that. LSF sorts by the
// rightmost key first and drops hosts between passes, so that in effect
// the leftmost key decides; here the keys compare left to right, the next
// key breaking ties of the previous one, which gives the same first key
// and a deterministic order. A host that does not define a key's resource
// comes after those that do.
func (s *Schema) CompileOrder(o *Order) (*Orderer, error) {
	if o == nil {
		o = &DefaultOrder
	}
	out := &Orderer{}
	for _, k := range o.Keys {
		r, i, ok := s.Lookup(k.Name)
		if !ok {
			return nil, fmt.Errorf("unknown resource name '%s' in order[]", k.Name)
		}
		if r.Kind != Numeric {
			return nil, fmt.Errorf("order[] sorts by numeric resources; %s is a %s resource", r.Name, r.Kind)
		}
		out.keys = append(out.keys, orderKey{index: i, asc: r.Increasing != k.Reverse})
	}
	return out, nil
}

// Compare returns -1 when host a comes before host b, 1 when after, and 0
// when the order does not tell them apart. It suits slices.SortStableFunc.
func (o *Orderer) Compare(a, b *Host) int {
	for _, k := range o.keys {
		x, y := a.Num[k.index], b.Num[k.index]
		xn, yn := x != x, y != y
		switch {
		case xn && yn:
			continue
		case xn:
			return 1
		case yn:
			return -1
		case x == y:
			continue
		}
		if (x < y) == k.asc {
			return -1
		}
		return 1
	}
	return 0
}
