package sim

import (
	"slices"

	"xce/lib/sched"
)

// Standalone claims in a replay (Options.Claims): every cycle's snapshot
// has them, as the controller's has, so a pending claim is allocated by
// the first cycle that runs (lib/sched/claim.go) and a held one keeps
// what it holds from every job of the trace. No trace format can say
// that a job uses a claim (bsub -claim is in none of SWF, lsb.acct or
// XCE's accounting log), nor when a claim is created, deleted or ends:
// the claims are there from the trace's start to its end, and the
// trace's jobs only run around them.

// snapClaims gives the snapshot the claims, copied from Options the
// first time (the run then records their allocations in the copy).
func (e *eng) snapClaims() {
	if e.snap.Claims == nil && len(e.opt.Claims) > 0 {
		e.snap.Claims = slices.Clone(e.opt.Claims)
	}
}

// applyClaims records the claims a cycle allocated.
func (e *eng) applyClaims(d *sched.Decision) {
	for _, cp := range d.Claims {
		for i := range e.snap.Claims {
			if cl := &e.snap.Claims[i]; cl.Name == cp.Name && cl.Held == nil {
				h := cp.Held
				cl.Held = &h
			}
		}
	}
}

// HeldClaims is where the run's claims were allocated, by name (a claim
// that never was is missing).
func (r *Result) HeldClaims() map[string]sched.HostAlloc {
	out := map[string]sched.HostAlloc{}
	for _, cl := range r.claims {
		if cl.Held != nil {
			out[cl.Name] = *cl.Held
		}
	}
	return out
}
