package sched

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// borrowOf runs a cycle and the borrow over its decision: "lic_x=1".
func borrowOf(s *Snapshot, pools ...Pool) string {
	d := Schedule(s)
	b := ComputeBorrow(s, d, pools)
	var units []string
	for _, n := range slices.Sorted(maps.Keys(b.Units)) {
		units = append(units, fmt.Sprintf("%s=%d", n, b.Units[n]))
	}
	return strings.Join(units, " ")
}

func TestBorrow(t *testing.T) {
	cases := []struct {
		name    string
		hosts   []string
		jobs    []Job
		running []Alloc
		pools   []Pool
		want    string
	}{
		{name: "a job needing 3 tokens of 2 borrows 1",
			hosts: []string{"a 4"}, jobs: []Job{mkJob(1, "rusage[lic_x=3]")},
			pools: []Pool{{Name: "lic_x", Free: 3}}, want: "lic_x=1"},
		{name: "tokens asked for and not granted count against the borrow",
			hosts: []string{"a 4"}, jobs: []Job{mkJob(1, "rusage[lic_x=3]")},
			pools: []Pool{{Name: "lic_x", Pending: 1, Free: 2}}, want: ""},
		{name: "never more than free",
			hosts: []string{"a 4"}, jobs: []Job{mkJob(1, "rusage[lic_x=2]"), mkJob(2, "rusage[lic_x=2]"), mkJob(3, "rusage[lic_x=2]")},
			pools: []Pool{{Name: "lic_x", Free: 3}}, want: "lic_x=2"},
		{name: "what running jobs and this cycle's placements hold counts",
			hosts: []string{"a 4"}, jobs: []Job{mkJob(1, "rusage[lic_x=1]"), mkJob(2, "rusage[lic_x=2]")},
			running: []Alloc{mkRun(10, "bob normal 1m - a*1", "rusage[lic_x=1]", 0)},
			pools:   []Pool{{Name: "lic_x", Free: 5}}, want: "lic_x=2"},
		{name: "a job that also waits for a slot borrows nothing",
			hosts: []string{"a 1"}, jobs: []Job{mkJob(1, "rusage[lic_x=3]")},
			running: []Alloc{mkRun(10, "bob normal 1m - a*1", "", 0)},
			pools:   []Pool{{Name: "lic_x", Free: 3}}, want: ""},
		{name: "nothing pending: only what is used",
			hosts: []string{"a 4"}, jobs: []Job{mkJob(1, "rusage[lic_x=1]")},
			pools: []Pool{{Name: "lic_x", Free: 3}}, want: ""},
		{name: "no pool, no borrow",
			hosts: []string{"a 4"}, jobs: []Job{mkJob(1, "rusage[lic_x=3]")},
			want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Snapshot{Now: t0, Schema: testSchema, Hosts: hosts(tc.hosts...), Jobs: tc.jobs, Running: tc.running,
				Queues: []Queue{{Name: "normal", Priority: 30}}, Shared: map[string]float64{"lic_x": 2}}
			if got := borrowOf(s, tc.pools...); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if s.Shared["lic_x"] != 2 || len(s.Running) != len(tc.running) {
				t.Errorf("snapshot modified: %v, %d running", s.Shared, len(s.Running))
			}
		})
	}
}
