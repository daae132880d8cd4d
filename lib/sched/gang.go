package sched

import (
	"fmt"
	"slices"
)

// Gang groups (bgadd -gang N): the pending jobs of a job group with a
// gang size start N at a time, all N in one cycle or none of them.
//
// The members are the jobs whose group is the gang group itself (not its
// subgroups). Its pending jobs, in the snapshot's order, form gangs of N:
// the first N one gang, the next N the next; a last gang with fewer than
// N members is not tried (it waits for the rest to be submitted or
// released). A gang whose members are in different queues is not tried
// either: its members would be tried at different turns.
//
// A gang is tried whole at its first member's turn in its queue: every
// member then, one after the other, so that two gangs never interleave.
// When some but not all of a gang's members fit, none may start: what
// its tentative placements took is put back at once and the run goes on
// as one without the gang would (gangundo.go), or, where the cycle has
// state that cannot be put back so, the cycle is run again without that
// gang's jobs, so that what its tentative placements took (slots,
// counters, devices, limits) is free for the jobs after it in the same
// cycle, and it holds nothing. Each
// run leaves out at least one more gang, so the runs end; the gangs left
// out wait whole for a later cycle, with a reason saying how many of
// their members fit. From the third run on only the gangs placed whole
// in the run before take part (the others had their turn), so that a
// cycle runs about three times at most when gangs fit in part. Two gangs competing for the same slots therefore
// never both hold part of them: the first in order takes them whole, or,
// if it cannot, gives them to the next one whole.
//
// A gang member's failed try may still make a slot reservation (a queue
// with SLOT_RESERVE) like any job's; only placements are all or none.

// GangGroup is a job group whose pending jobs start Size at a time.
type GangGroup struct {
	Path string // "/a/b"
	Size int    // jobs per gang; below 2 the group is not a gang
}

// gang is one gang of a cycle: Size pending jobs of one group.
type gang struct {
	group string
	size  int
	jobs  []JobKey
}

// gangPlan is the gangs of a snapshot and the members that are not
// tried at all, with their reasons.
type gangPlan struct {
	gangs []gang
	of    map[JobKey]int      // member -> index in gangs
	held  map[JobKey][]string // members not tried, and why
}

// planGangs forms the snapshot's gangs; nil when it has none.
func planGangs(s *Snapshot) *gangPlan {
	sizes := map[string]int{}
	for _, g := range s.GangGroups {
		if p := cleanGroup(g.Path); p != "" && g.Size > 1 {
			sizes[p] = g.Size
		}
	}
	if len(sizes) == 0 {
		return nil
	}
	byGroup := map[string][]int{}
	var groups []string
	for i := range s.Jobs {
		p := cleanGroup(s.Jobs[i].JobGroup)
		if sizes[p] == 0 {
			continue
		}
		if _, ok := byGroup[p]; !ok {
			groups = append(groups, p)
		}
		byGroup[p] = append(byGroup[p], i)
	}
	if len(groups) == 0 {
		return nil
	}
	pl := &gangPlan{of: map[JobKey]int{}, held: map[JobKey][]string{}}
	for _, p := range groups {
		n := sizes[p]
		idx := byGroup[p]
		for len(idx) > 0 {
			m := idx[:min(n, len(idx))]
			idx = idx[len(m):]
			if len(m) < n {
				why := fmt.Sprintf("Gang group %s: %d of %d members are ready to start; the gang waits for the others", p, len(m), n)
				for _, ji := range m {
					pl.held[s.Jobs[ji].Key] = []string{why}
				}
				continue
			}
			q := s.Jobs[m[0]].Queue
			if slices.ContainsFunc(m, func(ji int) bool { return s.Jobs[ji].Queue != q }) {
				why := fmt.Sprintf("Gang group %s: the gang's members are in different queues; they cannot start together", p)
				for _, ji := range m {
					pl.held[s.Jobs[ji].Key] = []string{why}
				}
				continue
			}
			g := gang{group: p, size: n}
			for _, ji := range m {
				g.jobs = append(g.jobs, s.Jobs[ji].Key)
				pl.of[s.Jobs[ji].Key] = len(pl.gangs)
			}
			pl.gangs = append(pl.gangs, g)
		}
	}
	return pl
}

// gangRun is one run of the cycle's gangs: which gang each of the run's
// jobs belongs to and which gangs were tried.
type gangRun struct {
	of    map[int]int  // job index in the run's snapshot -> gang
	tried []bool       // by gang
	jobs  [][]int      // by gang: its members' job indices
	ok    map[int]bool // members placed in this run
	// left is, by gang, how many of its members fit when its partial
	// placements were taken back within the run (gangundo.go); -1: not.
	left []int
}

// tryJob tries job ji, or when it is a gang member, its whole gang at
// its first member's turn. It reports whether ji was placed.
func (c *cycle) tryJob(ji int) bool {
	gr := c.gangs
	if gr == nil {
		return c.try(&c.s.Jobs[ji])
	}
	g, ok := gr.of[ji]
	if !ok {
		return c.try(&c.s.Jobs[ji])
	}
	if !gr.tried[g] {
		gr.tried[g] = true
		members := gr.jobs[g]
		c.trial = c.beginGang(c.s.Jobs[members[0]].Queue)
		placed := 0
		for _, m := range members {
			if c.full() {
				break
			}
			c.noteJob(&c.s.Jobs[m])
			if c.try(&c.s.Jobs[m]) {
				gr.ok[m] = true
				placed++
			}
		}
		t := c.trial
		c.trial = nil
		if placed > 0 && placed < len(members) && t != nil && c.undoGang(t) {
			for _, m := range members {
				delete(gr.ok, m)
			}
			gr.left[g] = placed
		}
	}
	// Whether the gang stays placed is decided after the run.
	return gr.ok[ji]
}

// Schedule's loop over gangs: run the cycle, leave out the gangs that
// were placed in part, and run it again until none is.
func scheduleGangs(s *Snapshot, pl *gangPlan) *Decision {
	out := make([]bool, len(pl.gangs)) // gangs left out of the next run
	fit := make([]int, len(pl.gangs))  // their members placed when left out
	why := map[JobKey][]string{}       // reasons from the run that left them out
	runs := 0
	run := *s
	var buf []Job // each run's jobs, reused
	for {
		// The snapshot's own jobs (read only) while none is left out.
		run.Jobs = s.Jobs
		if len(pl.held) > 0 || slices.Contains(out, true) {
			run.Jobs = buf[:0]
			for i := range s.Jobs {
				k := s.Jobs[i].Key
				if _, held := pl.held[k]; held {
					continue
				}
				if g, ok := pl.of[k]; ok && out[g] {
					continue
				}
				run.Jobs = append(run.Jobs, s.Jobs[i])
			}
			buf = run.Jobs
		}
		gr := &gangRun{of: map[int]int{}, ok: map[int]bool{}, tried: make([]bool, len(pl.gangs)), jobs: make([][]int, len(pl.gangs)), left: make([]int, len(pl.gangs))}
		for g := range gr.left {
			gr.left[g] = -1
		}
		for i := range run.Jobs {
			if g, ok := pl.of[run.Jobs[i].Key]; ok {
				gr.of[i] = g
				gr.jobs[g] = append(gr.jobs[g], i)
			}
		}
		d := schedule(&run, gr)
		placed := make([]int, len(pl.gangs))
		for _, p := range d.Placements {
			if g, ok := pl.of[p.Job]; ok {
				placed[g]++
			}
		}
		again := false
		for g := range pl.gangs {
			if !out[g] && gr.left[g] >= 0 {
				// Taken back within the run: left out of any later one.
				out[g], fit[g] = true, gr.left[g]
				for _, k := range pl.gangs[g].jobs {
					why[k] = d.Pending[k]
				}
				continue
			}
			if out[g] || placed[g] == 0 || placed[g] == pl.gangs[g].size {
				continue
			}
			out[g], fit[g], again = true, placed[g], true
			for _, k := range pl.gangs[g].jobs {
				why[k] = d.Pending[k]
			}
		}
		runs++
		if again && runs >= 2 {
			// From the third run on, only the gangs placed whole so far
			// take part: each run would otherwise let the slots of the
			// gangs it left out fit later gangs in part, one more run
			// each. The gangs left out here had their turn in a run.
			for g := range pl.gangs {
				if !out[g] && placed[g] == 0 {
					out[g] = true
					for _, k := range pl.gangs[g].jobs {
						why[k] = d.Pending[k]
					}
				}
			}
		}
		if again {
			continue
		}
		for i := range d.Placements {
			if g, ok := pl.of[d.Placements[i].Job]; ok {
				d.Placements[i].Gang = g + 1
			}
		}
		if s.NoReasons {
			return d
		}
		for k, lines := range pl.held {
			d.Pending[k] = lines
		}
		for g := range pl.gangs {
			gg := &pl.gangs[g]
			if !out[g] && placed[g] == gg.size {
				continue
			}
			line := fmt.Sprintf("Gang group %s: %d of %d members can be placed now", gg.group, fit[g], gg.size)
			for _, k := range gg.jobs {
				lines := d.Pending[k]
				if out[g] {
					lines = why[k]
				}
				d.Pending[k] = append([]string{line}, lines...)
			}
		}
		return d
	}
}
