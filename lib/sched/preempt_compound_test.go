package sched

import (
	"slices"
	"testing"
)

// A compound requirement preempts when every part finds victims: 2 slots
// on one host and 4 on another, both hosts full of low jobs. A part that
// cannot be satisfied even with victims preempts nothing.
func TestPreemptCompound(t *testing.T) {
	run := []Alloc{
		mkRun(1, "bob low 10m - a*4", "", 0),
		mkRun(2, "bob low 10m - b*4", "", 0),
		mkRun(3, "bob normal 10m - c*4", "", 0),
	}
	s := preSnap(hosts("a 4", "b 4", "c 4"), run, mkJob(10, "2*{span[hosts=1]} + 4*{span[hosts=1]}", "q=urgent"))
	s.Queues[0].Preempt.Preemptive = []string{"low"}
	d := Schedule(s)
	if len(d.Placements) != 1 {
		t.Fatalf("placements %v, want the compound job placed", d.Placements)
	}
	v := slices.Clone(d.Placements[0].Victims)
	slices.SortFunc(v, func(a, b JobKey) int { return int(a.ID - b.ID) })
	if !slices.Equal(v, []JobKey{{ID: 1}, {ID: 2}}) {
		t.Errorf("victims %v, want [1 2]", v)
	}
	hostsOf := map[string]int{}
	for _, ha := range d.Placements[0].Hosts {
		hostsOf[ha.Host] += ha.Slots
	}
	if hostsOf["c"] != 0 || hostsOf["a"]+hostsOf["b"] != 6 {
		t.Errorf("placed on %v", d.Placements[0].Hosts)
	}
	// A third part of 4 more slots: only c is left, and its job may not
	// be preempted: nothing is.
	s.Jobs = []Job{mkJob(11, "2*{span[hosts=1]} + 4*{span[hosts=1]} + 4*{span[hosts=1]}", "q=urgent")}
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Errorf("placed %v", d.Placements)
	}
}
