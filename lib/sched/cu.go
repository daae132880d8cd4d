package sched

// Compute units (LSF's cu[] section): placement over groups of hosts laid
// out like the network (enclosures, racks), as LSF 10.1 defines it.
//
//   - The units of the requested type (cu[type=...], else the default
//     type) replace hosts as what is chosen first; hosts in no unit of
//     that type are not considered. Within a unit, hosts are taken in the
//     requirement's order[] order under its span[], as without cu[].
//   - pref=config takes the units in configuration order, maxavail those
//     with the most free slots first, minavail the fewest first (ties in
//     configuration order); bestfit finds the fewest units that hold the
//     job and, among them, prefers units with fewer free slots. A unit's
//     free slots are those the job could get there now.
//   - maxcus=N: the job spans at most N units; units are taken first fit,
//     skipping a unit after which the rest of the job could no longer fit
//     in the units still allowed. With -n min,max the job gets up to max
//     slots in the units chosen.
//   - usablecuslots=N: every unit the job uses gives it at least N slots,
//     except one that gives the last, fewer, slots the job needs.
//   - balance: the job's slots (-n's minimum; max is disregarded, as LSF
//     does) are split over the fewest units possible, as evenly as
//     possible (shares differ by at most one); pref orders the units
//     tried for that count.
//   - excl: the job takes only units on which nothing runs, and while it
//     runs no other job is placed on any host of those units (their
//     hosts pend other jobs with reasonCUExcl). A running job holds its
//     units through Alloc.CUExcl.
//   - Pending reasons: LSF's "Not enough hosts to meet the job's
//     spanning requirement" when hosts have room but no units fit, the
//     host reasons as without cu[], then a line naming the units and
//     their free slots ("cu[type=rack:maxcus=1]: the job needs 9 slots in
//     at most 1 rack; free slots: r1 4, r2 6"), the units a cu[excl] job
//     may not use because jobs run there, and how many usable hosts are
//     in no unit of the type. LSF publishes no compute-unit reason text;
//     hosts in a unit a cu[excl] job holds count under reasonCUExcl
//     (bhosts' closed_cu_excl).
//   - Compound terms and alternatives each honour their own cu[] (the
//     grammar keeps balance and excl out of them).
//   - Slot reservation (SlotReserve): a pending cu[] job reserves as other
//     jobs do, its units chosen in configuration order whatever its pref
//     (LSF: "for resource reservation, the default pref=config is always
//     used"), under its maxcus, usablecuslots and balance, at the
//     earliest time its slots are free. A cu[excl] job plans on units
//     whose every host is then empty and holds all their slots, so that
//     no other job starts in them before it does.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"xce/lib/resreq"
)

// ComputeUnits is the cluster's compute unit configuration (lsb.params
// COMPUTE_UNIT_TYPES and lsb.hosts ComputeUnit sections).
type ComputeUnits struct {
	// Types are the unit types, finest first; Default is the type of a
	// cu[] without type= (COMPUTE_UNIT_TYPES's "!", else the first).
	Types   []string
	Default string
	// Units in configuration order (cu[pref=config]).
	Units []ComputeUnit
}

// ComputeUnit is one compute unit.
type ComputeUnit struct {
	Name, Type string
	// Hosts are every host of the unit, those of nested units included.
	Hosts []string
}

// reasonCUExcl is the host reason for a host whose compute unit a
// cu[excl] job holds (bhosts' closed_cu_excl).
const reasonCUExcl = "Host belongs to a compute unit used exclusively by a job"

// cuCycle is what a cycle knows of the compute units.
type cuCycle struct {
	types  map[string]*cuType
	locked []bool // by host: in a unit a cu[excl] job holds
}

// cuType is the units of one type.
type cuType struct {
	name  string
	units []cuUnit
	of    []int32 // by host: its unit of this type; -1: none
}

type cuUnit struct {
	name  string
	hosts []int // every member host (by index), in configuration order
}

// cuNeed is one part's cu[] section.
type cuNeed struct {
	spec *resreq.CU
	t    *cuType
	// lists are the part's hosts (p.all, in order[] order) by unit; nil
	// until first needed.
	lists [][]int
}

// initCU builds the units of the snapshot and locks those that running
// cu[excl] jobs hold.
func (c *cycle) initCU() {
	cfg := c.s.CU
	if cfg == nil || len(cfg.Units) == 0 {
		return
	}
	cc := &cuCycle{types: map[string]*cuType{}, locked: make([]bool, len(c.hosts))}
	for _, name := range cfg.Types {
		t := &cuType{name: name, of: make([]int32, len(c.hosts))}
		for i := range t.of {
			t.of[i] = -1
		}
		cc.types[name] = t
	}
	for _, u := range cfg.Units {
		t := cc.types[u.Type]
		if t == nil {
			continue // the configuration checks types; a stray one is ignored
		}
		cu := cuUnit{name: u.Name}
		for _, hn := range u.Hosts {
			h, ok := c.byName[hn]
			if !ok || t.of[h] >= 0 {
				continue // not a host now, or already in a unit of the type
			}
			t.of[h] = int32(len(t.units))
			cu.hosts = append(cu.hosts, h)
		}
		t.units = append(t.units, cu)
	}
	c.cu = cc
	for i := range c.s.Running {
		a := &c.s.Running[i]
		if a.CUExcl == "" {
			continue
		}
		for _, ha := range a.Hosts {
			if h, ok := c.byName[ha.Host]; ok {
				c.lockCU(a.CUExcl, h)
			}
		}
	}
}

// lockCU marks every host of host h's unit of type typ as held by a
// cu[excl] job.
func (c *cycle) lockCU(typ string, h int) {
	t := c.cu.types[typ]
	if t == nil || t.of[h] < 0 {
		return
	}
	for _, m := range t.units[t.of[h]].hosts {
		c.cu.locked[m] = true
	}
}

// newCUNeed checks a cu[] section against the configuration.
func (c *cycle) newCUNeed(spec *resreq.CU) (*cuNeed, error) {
	cfg := c.s.CU
	if cfg == nil || len(cfg.Types) == 0 {
		return nil, fmt.Errorf("cu[]: no compute units are configured (compute_unit_types)")
	}
	typ := spec.Type
	if typ == "" {
		typ = cfg.Default
		if typ == "" {
			typ = cfg.Types[0]
		}
	}
	var t *cuType
	if c.cu != nil {
		t = c.cu.types[typ]
	}
	if t == nil {
		if !slices.Contains(cfg.Types, typ) {
			return nil, fmt.Errorf("cu[type=%s]: %s is not a compute unit type (compute_unit_types: %s)", typ, typ, strings.Join(cfg.Types, " "))
		}
		t = &cuType{name: typ} // a type with no units: nothing fits
	}
	return &cuNeed{spec: spec, t: t}, nil
}

// unitLists returns the part's hosts split by unit (each in p.all's
// order), computed once per part.
func (n *cuNeed) unitLists(p *part) [][]int {
	if n.lists != nil {
		return n.lists
	}
	n.lists = make([][]int, len(n.t.units))
	for _, h := range p.all {
		if u := n.t.of[h]; u >= 0 {
			n.lists[u] = append(n.lists[u], h)
		}
	}
	return n.lists
}

// cuEmpty reports whether nothing runs on any host of unit u, and nothing
// earlier parts of the job took there: a cu[excl] job may use it.
func (c *cycle) cuEmpty(t *cuType, u int, ov overlay) bool {
	for _, h := range t.units[u].hosts {
		hs := &c.hosts[h]
		if hs.used > 0 || hs.excl || c.cu.locked[h] || ov.slots(h) > 0 {
			return false
		}
	}
	return true
}

// cuFree returns the slots the job could get in each unit (capf: on a
// host), under its span[] (at most hi), and the unit's free slots (what
// pref orders by); both -1 for a unit a cu[excl] job may not use (empty:
// whether the unit is empty; nil: now).
func (c *cycle) cuFree(p *part, hi int, capf func(int) int, ov overlay, empty func(u int) bool) (fit, avail []int) {
	n := p.cu
	lists := n.unitLists(p)
	fit, avail = make([]int, len(lists)), make([]int, len(lists))
	if empty == nil {
		empty = func(u int) bool { return c.cuEmpty(n.t, u, ov) }
	}
	for u, l := range lists {
		if n.spec.Excl && !empty(u) {
			fit[u], avail[u] = -1, -1
			continue
		}
		if len(l) == 0 {
			continue
		}
		for _, h := range l {
			avail[u] += capf(h)
		}
		if avail[u] == 0 {
			continue // nothing free: no need to allocate
		}
		_, _, fit[u] = c.allocate(p, l, capf, 1, hi, false, false)
	}
	return fit, avail
}

// cuOrder returns the usable units (fit > 0) in the order pref asks, by
// their free slots.
func cuOrder(pref string, fit, avail []int) []int {
	var idx []int
	for u, f := range fit {
		if f > 0 {
			idx = append(idx, u)
		}
	}
	switch pref {
	case "maxavail":
		slices.SortStableFunc(idx, func(a, b int) int { return avail[b] - avail[a] })
	case "minavail", "bestfit":
		slices.SortStableFunc(idx, func(a, b int) int { return avail[a] - avail[b] })
	}
	return idx
}

// sumLargest is the sum of the k largest free counts of units.
func sumLargest(units []int, free []int, k int) int {
	if k <= 0 {
		return 0
	}
	top := make([]int, 0, k+1)
	for _, u := range units {
		f := free[u]
		i := sort.Search(len(top), func(i int) bool { return top[i] < f })
		if i >= k {
			continue
		}
		top = slices.Insert(top, i, f)
		if len(top) > k {
			top = top[:k]
		}
	}
	s := 0
	for _, f := range top {
		s += f
	}
	return s
}

// fitCU allocates part p now under its cu[] section: between lo and hi
// slots, in units the section allows.
func (c *cycle) fitCU(b *bucket, p *part, lo, hi int, ov overlay) ([]pick, int) {
	if c.cu == nil {
		return nil, 0 // no unit is configured: nothing fits
	}
	capf := func(h int) int {
		k, _, _ := c.capNow(b, p, h, ov)
		return k
	}
	return c.fitUnits(p, p.cu.spec.Pref, lo, hi, capf, ov, nil)
}

// fitUnits allocates part p under its cu[] section with the units
// ordered by pref, capf the slots each host can give and empty whether
// a unit is empty (nil: now): fitCU's placement now, and the planning of
// a reservation at a later time (reserveCU).
func (c *cycle) fitUnits(p *part, pref string, lo, hi int, capf func(int) int, ov overlay, empty func(u int) bool) ([]pick, int) {
	n := p.cu
	lists := n.unitLists(p)
	if n.spec.Balance {
		return c.fitBalanced(p, pref, lo, capf, ov, empty)
	}
	free, avail := c.cuFree(p, hi, capf, ov, empty)
	order := cuOrder(pref, free, avail)
	maxcus := n.spec.MaxCUs
	if maxcus <= 0 {
		maxcus = len(order)
	}
	if p.span.Hosts == 1 {
		// One host: the first unit (in pref order) with a host that holds
		// the job.
		for _, u := range order {
			if picks, _, k := c.allocate(p, lists[u], capf, lo, hi, false, false); picks != nil {
				return picks, k
			}
		}
		return nil, 0
	}
	if pref == "bestfit" {
		order = bestFit(order, free, lo, maxcus)
	}
	use := n.spec.UsableCUSlots
	var picks []pick
	total, used := 0, 0
	for i, u := range order {
		if used == maxcus || total >= hi {
			break
		}
		take := min(free[u], hi-total)
		if use > 0 && take < use && take < lo-total {
			continue // too few slots here (the last unit may give fewer)
		}
		if n.spec.MaxCUs > 0 {
			// Leave this unit out if the rest of the job's minimum could
			// then not fit in the units still allowed.
			if rest := lo - total - take; rest > 0 && sumLargest(order[i+1:], free, maxcus-used-1) < rest {
				continue
			}
		}
		pk, _, k := c.allocate(p, lists[u], capf, 1, take, false, false)
		if pk == nil {
			continue
		}
		picks = append(picks, pk...)
		total += k
		used++
	}
	if total < lo {
		return nil, total
	}
	return picks, total
}

// bestFit returns the fewest units (at most maxcus) that hold lo slots,
// preferring units with fewer free slots; order is by free slots,
// fewest first. When no such set exists it returns order unchanged (the
// first fit then fails with its reasons).
func bestFit(order []int, free []int, lo, maxcus int) []int {
	k := 0
	for s, i := 0, len(order)-1; i >= 0 && s < lo; i-- {
		s += free[order[i]]
		k++
	}
	if sumLargest(order, free, k) < lo || k > maxcus {
		return order
	}
	var out []int
	need := lo
	rest := slices.Clone(order)
	for len(out) < k && need > 0 {
		found := false
		for i, u := range rest {
			others := slices.Delete(slices.Clone(rest), i, i+1)
			if need-free[u] <= 0 || sumLargest(others, free, k-len(out)-1) >= need-free[u] {
				out = append(out, u)
				need -= free[u]
				rest = others
				found = true
				break
			}
		}
		if !found {
			return order // cannot happen: k units hold lo
		}
	}
	return append(out, rest...) // the rest give slots up to the job's max
}

// fitBalanced splits lo slots evenly over the fewest units that hold
// them.
func (c *cycle) fitBalanced(p *part, pref string, lo int, capf func(int) int, ov overlay, empty func(u int) bool) ([]pick, int) {
	n := p.cu
	lists := n.unitLists(p)
	free, avail := c.cuFree(p, lo, capf, ov, empty)
	order := cuOrder(pref, free, avail)
	maxcus := n.spec.MaxCUs
	if maxcus <= 0 || maxcus > len(order) {
		maxcus = len(order)
	}
	for k := 1; k <= maxcus; k++ {
		q, r := lo/k, lo%k
		if q == 0 || n.spec.UsableCUSlots > 0 && q < n.spec.UsableCUSlots {
			break
		}
		// Units able to take q+1 serve the r larger shares first.
		var big, small []int
		for _, u := range order {
			switch {
			case free[u] >= q+1 && len(big) < r:
				big = append(big, u)
			case free[u] >= q && len(small) < k-r:
				small = append(small, u)
			}
			if len(big) == r && len(small) == k-r {
				break
			}
		}
		if len(big) < r || len(small) < k-r {
			continue
		}
		var picks []pick
		got := 0
		ok := true
		for _, u := range order {
			share := 0
			if slices.Contains(big, u) {
				share = q + 1
			} else if slices.Contains(small, u) {
				share = q
			} else {
				continue
			}
			pk, _, m := c.allocate(p, lists[u], capf, share, share, false, false)
			if pk == nil {
				ok = false
				break
			}
			picks = append(picks, pk...)
			got += m
		}
		if ok && got >= lo {
			return picks, got
		}
	}
	return nil, 0
}

// commitCU locks the units of a placed cu[excl] job.
func (c *cycle) commitCU(v *variant, has []HostAlloc) {
	if c.cu == nil {
		return
	}
	for _, p := range v.parts {
		if p.cu == nil || !p.cu.spec.Excl {
			continue
		}
		for _, ha := range has {
			if h, ok := c.byName[ha.Host]; ok {
				c.lockCU(p.cu.t.name, h)
			}
		}
	}
}

// maxUnitsListed bounds the units a pending reason names.
const maxUnitsListed = 8

// cuWhy explains, naming the units, why part p found no units for lo
// slots: "cu[type=rack:maxcus=1]: the job needs 8 slots in at most 1
// rack; free slots: r1 6, r2 4".
func (c *cycle) cuWhy(b *bucket, p *part, lo int) []string {
	n := p.cu
	spec := *n.spec
	if spec.Type == "" {
		spec.Type = n.t.name
	}
	head := spec.String()
	if len(n.t.units) == 0 {
		return []string{fmt.Sprintf("%s: no compute unit of type %s is configured", head, n.t.name)}
	}
	capf := func(h int) int {
		k, _, _ := c.capNow(b, p, h, nil)
		return k
	}
	_, free := c.cuFree(p, lo, capf, nil, nil)
	where := "in"
	switch {
	case spec.Balance:
		where = "balanced over"
	case p.span.Hosts == 1:
		where = "on one host of"
	}
	units := n.t.name + "s"
	if spec.MaxCUs > 0 {
		units = fmt.Sprintf("at most %s", plural(spec.MaxCUs, n.t.name))
	}
	line := fmt.Sprintf("%s: the job needs %d slots %s %s", head, lo, where, units)
	if spec.UsableCUSlots > 0 {
		line += fmt.Sprintf(", at least %d in each", spec.UsableCUSlots)
	}
	var parts, held []string
	for u, f := range free {
		if f < 0 {
			held = append(held, n.t.units[u].name)
			continue
		}
		if len(parts) < maxUnitsListed {
			parts = append(parts, fmt.Sprintf("%s %d", n.t.units[u].name, f))
		} else if len(parts) == maxUnitsListed {
			parts = append(parts, "...")
		}
	}
	if len(parts) > 0 {
		line += "; free slots: " + strings.Join(parts, ", ")
	}
	out := []string{line}
	if len(held) > 0 {
		if len(held) > maxUnitsListed {
			held = append(held[:maxUnitsListed], "...")
		}
		out = append(out, fmt.Sprintf("cu[excl]: jobs run in %s", strings.Join(held, ", ")))
	}
	outside := 0
	for _, h := range p.all {
		if n.t.of[h] < 0 {
			outside++
		}
	}
	if outside > 0 {
		verb := "are"
		if outside == 1 {
			verb = "is"
		}
		out = append(out, fmt.Sprintf("cu[type=%s]: %s in no %s %s not considered", n.t.name, plural(outside, "host"), n.t.name, verb))
	}
	return out
}

// reserveCU plans part p's cu[] placement of lo slots with capf the
// slots each host can give at the time tried: units in configuration
// order; for cu[excl], only units whose every host is then empty.
func (c *cycle) reserveCU(p *part, lo int, capf func(int) int) []pick {
	if c.cu == nil {
		return nil // no unit is configured
	}
	t := p.cu.t
	empty := func(u int) bool {
		for _, h := range t.units[u].hosts {
			if capf(h) < c.hosts[h].h.MaxSlots {
				return false
			}
		}
		return true
	}
	picks, _ := c.fitUnits(p, "config", lo, lo, capf, nil, empty)
	return picks
}

// cuHolds are the further slots a cu[excl] job's reservation holds: all
// of every host of the units its picks are in (those hosts not picked
// included), so that nothing else starts there first.
func (c *cycle) cuHolds(p *part, picks []pick) map[int]bool {
	if p.cu == nil || !p.cu.spec.Excl {
		return nil
	}
	t := p.cu.t
	out := map[int]bool{}
	for _, pk := range picks {
		if u := t.of[pk.h]; u >= 0 {
			for _, h := range t.units[u].hosts {
				out[h] = true
			}
		}
	}
	return out
}
