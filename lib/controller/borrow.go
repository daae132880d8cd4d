package controller

import (
	"maps"
	"slices"
	"strings"
	"time"

	"xce/lib/config"
	"xce/lib/policy"
	"xce/lib/sched"
)

// Shared resources a provider lends more units of ([resources.NAME]
// provider, lib/provision's loans): each cycle the scheduler sees a
// resource's total raised by the units lent now, and the units the jobs
// it left pending need beyond that (sched.ComputeBorrow) go to the
// provisioners with the hosts' demand; the provisioners give a loan back
// once its units have been unused for the resource's idle_time, judged by
// what running jobs hold (SharedUsed).

// TokenSupply is the part of the Supply that lends shared resources
// (lib/provision.Ledger).
type TokenSupply interface {
	// Tokens: per resource, units lent, units asked for and not lent
	// yet, and every unit on loan, as of version.
	Tokens() (version uint64, granted, pending, onLoan map[string]int)
	// SetTokens hands over a cycle's units to borrow computed against
	// version.
	SetTokens(version uint64, want map[string]int)
	// TokenWaitReason is the pending reason of a job waiting for units
	// of the resource.
	TokenWaitReason(resource string, conf *config.Config) string
}

// tokensSeen is what the last snapshot read of the loans (c.mu).
type tokensSeen struct {
	ok              bool
	version         uint64
	pending, onLoan map[string]int
}

// borrows reports whether any shared resource of conf has a provider.
func borrows(conf *config.Config) bool {
	for _, r := range conf.Resources {
		if r.Borrows() {
			return true
		}
	}
	return false
}

// addBorrowed raises the shared resources' totals by the units their
// providers lent, and notes the loans' version for supplyBorrow (c.mu
// held).
func (c *Controller) addBorrowed(conf *config.Config, shared map[string]float64) {
	c.tokens = tokensSeen{}
	ts, ok := c.supply.(TokenSupply)
	if !ok || !borrows(conf) {
		return
	}
	v, granted, pending, onLoan := ts.Tokens()
	for name, n := range granted {
		if _, ok := shared[name]; ok {
			shared[name] += float64(n)
		}
	}
	c.tokens = tokensSeen{ok: true, version: v, pending: pending, onLoan: onLoan}
}

// supplyBorrow computes the units the jobs the cycle left pending need
// beyond the shared resources' totals and hands them to the
// provisioners (c.mu held).
func (c *Controller) supplyBorrow(snap *sched.Snapshot, d *sched.Decision) {
	ts, ok := c.supply.(TokenSupply)
	if !ok || !c.tokens.ok {
		return
	}
	conf := c.config()
	var pools []sched.Pool
	for _, name := range slices.Sorted(maps.Keys(conf.Resources)) {
		if r := conf.Resources[name]; r.Borrows() {
			pools = append(pools, sched.Pool{Name: name, Pending: c.tokens.pending[name], Free: int(r.BorrowMax) - c.tokens.onLoan[name]})
		}
	}
	b := sched.ComputeBorrow(snap, d, pools)
	ts.SetTokens(c.tokens.version, b.Units)
	// The jobs that wait for units say so first, as those that wait for
	// a template's hosts do (supplyDemand).
	reasons := map[string]string{}
	for k, names := range b.Jobs {
		r := c.jobs[key{k.ID, k.Index}]
		if r == nil {
			continue
		}
		var lines []string
		for _, name := range names {
			why, ok := reasons[name]
			if !ok {
				why = ts.TokenWaitReason(name, conf)
				reasons[name] = why
			}
			if why != "" {
				lines = append(lines, why)
			}
		}
		if why := strings.Join(lines, "\n"); why != "" && !strings.HasPrefix(r.why, why) {
			r.why = strings.TrimSuffix(why+"\n"+r.why, "\n")
		}
	}
}

// SharedUsed is what running jobs hold of each shared resource that
// borrows (nil: none borrows): the provisioners give back loans beyond
// it.
func (c *Controller) SharedUsed() map[string]float64 {
	conf := c.config()
	if !borrows(conf) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sharedUsed(conf)
}

// WithSharedUsed runs do with SharedUsed's figures while no scheduling
// cycle can run, so that what do records (a loan given back) is seen by
// the next cycle and do sees every job the last one started
// (provision.Ledger.SetReturnCheck).
func (c *Controller) WithSharedUsed(do func(used map[string]float64) error) error {
	conf := c.config()
	c.mu.Lock()
	defer c.mu.Unlock()
	return do(c.sharedUsed(conf))
}

// sharedUsed is SharedUsed's figures (c.mu held): the running jobs'
// and claims' charges to the shared resources alone (sched.SharedHeld),
// not a whole scheduler view of every host, as the provisioners ask at
// each heartbeat.
func (c *Controller) sharedUsed(conf *config.Config) map[string]float64 {
	snap := &sched.Snapshot{Now: time.Now(), Schema: conf.Schema(), Shared: policy.Shared(conf),
		Preempt: policy.PreemptParams(conf), Running: c.runningAllocs(conf)}
	c.snapClaims(snap)
	held := sched.SharedHeld(snap)
	out := map[string]float64{}
	for name, r := range conf.Resources {
		if r.Borrows() {
			out[name] = held[name]
		}
	}
	return out
}
