package sim

import (
	"math"

	"xce/lib/policy"
)

// Advance reservations in a replay: each cycle's snapshot has their
// windows, as the controller's has (lib/policy), and a window's start or
// end is an instant of the clock, so that the slots it frees are used
// then.

// snapRsvs sets the snapshot's reservations at now.
func (e *eng) snapRsvs(now int64) {
	if len(e.opt.Reservations) == 0 {
		return
	}
	e.snap.AdvRsvs = policy.AdvRsvs(e.opt.Reservations, at(now))
}

// rsvBoundary is the first window start or end after now (MaxInt64:
// none).
func (e *eng) rsvBoundary(now int64) int64 {
	b := int64(math.MaxInt64)
	for _, r := range e.opt.Reservations {
		for _, w := range policy.RsvWindows(r, at(now), policy.RsvHorizon) {
			for _, t := range []int64{int64(w.Start.Sub(Epoch)), int64(w.End.Sub(Epoch))} {
				if t > now && t < b {
					b = t
				}
			}
		}
	}
	return b
}
