package sched

import (
	"math"
	"testing"
)

func TestHostListIncludes(t *testing.T) {
	groups := map[string][]string{"cpu": {"a", "b"}, "all_cpu": {"cpu"}, "loop": {"loop", "c"}}
	for _, tc := range []struct {
		list []string
		host string
		want bool
	}{
		{nil, "a", true},
		{[]string{"all"}, "z", true},
		{[]string{"cpu"}, "a", true},
		{[]string{"cpu"}, "c", false},
		{[]string{"all_cpu"}, "b", true},
		{[]string{"all", "~cpu"}, "a", false},
		{[]string{"all", "~cpu"}, "c", true},
		{[]string{"a+2", "c"}, "a", true},
		{[]string{"loop"}, "c", true},
		{[]string{"none"}, "a", false},
	} {
		if got := HostListIncludes(tc.list, tc.host, groups); got != tc.want {
			t.Errorf("HostListIncludes(%v, %s) = %v, want %v", tc.list, tc.host, got, tc.want)
		}
	}
}

// Look reports what running jobs hold, as the scheduler charges it: the
// unused part of a mem reservation, whole counters, shared pools, the
// free slots select reads and the fairshare accounts' running slots.
func TestLook(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: testSchema, Hosts: hosts("a 4 mem=16000", "b 4 mem=16000"),
		Shared: map[string]float64{"lic_x": 5, "lic_y": 2},
		Queues: []Queue{{Name: "normal", Priority: 30, Fairshare: &Fairshare{Shares: map[string]int{"default": 1}}}},
		Running: []Alloc{
			mkRun(1, "bob normal 1h - a*2", "rusage[mem=5000:lic_x=2]", 3000),
			mkRun(2, "carol normal 30m - a*1", "rusage[mem=1000]", 4000),
		},
	}
	v := Look(s)
	a := v.Hosts["a"]
	// Job 1 uses 3000 of its 5000: 2000 unused; job 2 uses more than it reserved.
	if got := a.Reserved["mem"]; got != 2000 {
		t.Errorf("a reserved mem %v, want 2000 (%v)", got, a.Reserved)
	}
	_, si, _ := testSchema.Lookup("slots")
	_, mi, _ := testSchema.Lookup("mem")
	if a.Values.Num[si] != 1 || a.Values.Num[mi] != 14000 {
		t.Errorf("a: slots %v mem %v, want 1 and 14000", a.Values.Num[si], a.Values.Num[mi])
	}
	if b := v.Hosts["b"]; len(b.Reserved) != 0 || b.Values.Num[si] != 4 {
		t.Errorf("b: %v, slots %v", b.Reserved, b.Values.Num[si])
	}
	if v.SharedReserved["lic_x"] != 2 || v.SharedReserved["lic_y"] != 0 {
		t.Errorf("shared reserved %v", v.SharedReserved)
	}
	f := v.Fair["normal"]
	if f["bob"].Slots != 2 || math.Abs(f["bob"].RunHours-2) > 1e-9 || f["carol"].Slots != 1 || math.Abs(f["carol"].RunHours-0.5) > 1e-9 {
		t.Errorf("fair %v", f)
	}
	// The snapshot is left as it was.
	if s.Hosts[0].Values.Num[mi] != 16000 {
		t.Errorf("snapshot modified: mem %v", s.Hosts[0].Values.Num[mi])
	}
}
