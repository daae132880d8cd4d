package sched

import "strings"

// Job group limits (LSF's bgadd -L, bgmod -L): a group's limit caps the
// started jobs (RUN, SSUSP, USUSP: the Snapshot's Running) of the group
// and all its subgroups together, counted per job whatever its slots. A
// job may start only while every group on its path, itself included, is
// under its limit, so a subgroup without a limit is held by its parents'
// (LSF: a group added without a limit inherits its parents'). The root
// group has no limit. Within a cycle each placement is counted at once.

// reasonJobGroup is the pending reason of a job whose group, or a group
// above it, has as many started jobs as its limit.
const reasonJobGroup = "The job group has reached its job slot limit"

// JobGroupLimit is one job group's -L limit.
type JobGroupLimit struct {
	Path  string // "/a/b"
	Limit int    // the most started jobs of the group and its subgroups
}

// jgState is a cycle's job group limits and started-job counts.
type jgState struct {
	limit   map[string]int // by path: only the groups with a limit
	started map[string]int // by limited path: started jobs at or below it
}

// newJobGroups counts the running jobs against the snapshot's limits;
// nil when no group has one (the cycle then skips the check).
func newJobGroups(s *Snapshot) *jgState {
	if len(s.JobGroupLimits) == 0 {
		return nil
	}
	g := &jgState{limit: map[string]int{}, started: map[string]int{}}
	for _, l := range s.JobGroupLimits {
		if p := cleanGroup(l.Path); p != "" {
			g.limit[p] = l.Limit
		}
	}
	for i := range s.Running {
		g.count(s.Running[i].JobGroup)
	}
	return g
}

// cleanGroup is a group path without its trailing slashes; "" for none
// and for the root, which has no limit.
func cleanGroup(p string) string {
	p = strings.TrimRight(p, "/")
	if p == "" || p[0] != '/' {
		return ""
	}
	return p
}

// ancestors calls f with path and every group above it, deepest first,
// until f returns false.
func ancestors(path string, f func(string) bool) {
	for p := cleanGroup(path); p != ""; {
		if !f(p) {
			return
		}
		i := strings.LastIndexByte(p, '/')
		p = p[:i]
	}
}

// count adds one started job of group path to its limited groups.
func (g *jgState) count(path string) {
	ancestors(path, func(p string) bool {
		if _, ok := g.limit[p]; ok {
			g.started[p]++
		}
		return true
	})
}

// why is the reason job j may not start because of its group's limits, or
// "" if it may.
func (g *jgState) why(j *Job) string {
	if g == nil || j.JobGroup == "" {
		return ""
	}
	full := false
	ancestors(j.JobGroup, func(p string) bool {
		if l, ok := g.limit[p]; ok && g.started[p] >= l {
			full = true
		}
		return !full
	})
	if full {
		return reasonJobGroup
	}
	return ""
}

// start counts job j, just placed, against its groups' limits.
func (g *jgState) start(j *Job) {
	if g == nil || j.JobGroup == "" {
		return
	}
	g.count(j.JobGroup)
}
