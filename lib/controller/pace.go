package controller

import "time"

// The loop's pace. A cycle starts as soon as the one before it has
// committed its writes: short jobs end, and the next ones start, at the
// pace of their events, with no fixed pause. One exception: a cycle holds
// c.mu across its synced write, and submissions take c.mu twice each; with
// cycles back to back under a stream of submissions (their jobs ending as
// fast as they start), they would wait on nearly every cycle's fsync. So
// while submissions arrive, the loop leaves c.mu free for twice as long as
// the last cycle took (at most maxPause): two thirds of the time go to
// them, and what they bring is still taken by the next cycle all at once.

// maxPause bounds the pause under a stream of submissions.
const maxPause = 20 * time.Millisecond

// pause is how long the loop waits before its next cycle: subs is the
// count of accepted submissions when the last cycle began, took its
// duration (c.mu not held).
func (c *Controller) pause(subs int64, took time.Duration) time.Duration {
	if c.stats.submitted.Load() != subs {
		return max(min(2*took, maxPause), c.cfg.MinCycle)
	}
	return c.cfg.MinCycle
}
