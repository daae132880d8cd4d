package sched

import (
	"maps"
	"testing"
)

// TestSharedHeld: the shared resources' use alone is what the whole
// view counts: per-job, per-task and decaying amounts, several hosts (the
// lead host's only for a job-level amount), a suspended job that gives
// back a preemptable resource, and a held claim's tokens.
func TestSharedHeld(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: testSchema, Hosts: hosts("a 4 mem=16000", "b 4 mem=16000"),
		Shared: map[string]float64{"lic_x": 10, "lic_y": 4},
		Queues: []Queue{{Name: "normal", Priority: 30}},
		Running: []Alloc{
			mkRun(1, "bob normal 1h - a*2", "rusage[mem=500:lic_x=2]", 0),
			mkRun(2, "carol normal 30m - a*1:b*2", "rusage[lic_y=1/task]", 0),
			mkRun(3, "dan normal 10m - b*1", "rusage[lic_x=3:duration=20m:decay=1]", 0),
			mkRun(4, "erin normal 5m - b*1", "rusage[lic_x=1:lic_y=1]", 0),
		},
	}
	check := func(name string) {
		t.Helper()
		got, want := SharedHeld(s), Look(s).SharedReserved
		if !maps.Equal(got, want) {
			t.Errorf("%s: SharedHeld %v, Look %v", name, got, want)
		}
	}
	check("running")
	if got := SharedHeld(s)["lic_x"]; got != 2+1.5+1 {
		t.Errorf("lic_x %v, want 4.5 (2, half of 3 decayed, 1)", got)
	}
	s.Running[3].Preempt = AllocPreempt{Suspended: true, Count: 1}
	s.Preempt.Resources = []string{"lic_y"}
	check("suspended")
	s.Claims = []Claim{{Name: "c", Held: &HostAlloc{Host: "a", Rusage: mkRun(9, "x normal 0s - a*1", "rusage[lic_x=2]", 0).Hosts[0].Rusage}}}
	check("claim")
	s.Shared = nil
	if got := SharedHeld(s); len(got) != 0 {
		t.Errorf("no shared resources: %v", got)
	}
}
