package config

import (
	"maps"
	"slices"
)

// DefaultBorrowIdleTime is how long borrowed units of a shared resource
// stay unused before they go back to their provider.
const DefaultBorrowIdleTime = Duration(600)

// Borrows reports whether a provider lends more of the resource.
func (r *Resource) Borrows() bool { return r.Provider != "" && r.BorrowMax > 0 }

// Ceiling is the most of a shared resource the cluster can ever have: its
// total and what its provider may lend.
func (r *Resource) Ceiling() int64 {
	if r.Borrows() {
		return r.Total + r.BorrowMax
	}
	return r.Total
}

// checkBorrow checks the shared resources that a provider lends more of
// ([resources.NAME] provider, borrow_max, idle_time) and fills in the
// idle time's default.
func (c *Config) checkBorrow(k *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.Resources)) {
		r := c.Resources[name]
		key := "resources." + TOMLKey(name)
		if r.Provider == "" {
			if r.BorrowMax != 0 {
				k.add(key+".borrow_max", "only a resource with a provider borrows; set provider too")
			}
			if r.IdleTime != 0 {
				k.add(key+".idle_time", "only a resource with a provider returns what it borrowed when idle; set provider too")
			}
			if r.SimLendDelay != 0 {
				k.add(key+".sim_lend_delay", "only a resource with a provider borrows; set provider too")
			}
			continue
		}
		switch {
		case !r.Shared():
			k.add(key+".provider", "only a shared resource (total > 0) can borrow from a provider")
		case c.Providers[r.Provider] == nil:
			k.add(key+".provider", "unknown provider %s; define it under [providers.%s]", r.Provider, r.Provider)
		}
		if r.BorrowMax <= 0 {
			k.add(key+".borrow_max", "%d: a resource with a provider needs borrow_max, the most units it may borrow at once (at least 1)", r.BorrowMax)
		}
		if r.IdleTime < 0 {
			k.add(key+".idle_time", "%s: must not be negative", r.IdleTime)
		}
		if r.SimLendDelay < 0 {
			k.add(key+".sim_lend_delay", "%s: must not be negative", r.SimLendDelay)
		}
		if r.IdleTime == 0 {
			r.IdleTime = DefaultBorrowIdleTime
		}
	}
}
