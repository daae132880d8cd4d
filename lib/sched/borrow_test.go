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

// TestBorrowJobs: the jobs that wait for units are named with their
// pools: one that the raised total would start (units to borrow, or
// units asked for and not lent yet), not one that waits for a slot too,
// nor one that needs no pool's units.
func TestBorrowJobs(t *testing.T) {
	s := &Snapshot{Now: t0, Schema: testSchema, Hosts: hosts("a 4"),
		Jobs:    []Job{mkJob(1, "rusage[lic_x=3:lic_y=1]"), mkJob(2, "rusage[lic_y=1]"), mkJob(3, "rusage[lic_x=1]"), mkJob(4, "rusage[lic_x=9]")},
		Running: []Alloc{mkRun(10, "bob normal 1m - a*1", "", 0)},
		Queues:  []Queue{{Name: "normal", Priority: 30}}, Shared: map[string]float64{"lic_x": 2, "lic_y": 1}}
	d := Schedule(s)
	// Jobs 2 and 3 take lic_y's 1 and 1 of lic_x's 2; job 1 needs 3 of
	// lic_x (1 left) and 1 of lic_y (none left); job 4 more than lic_x
	// can ever have.
	b := ComputeBorrow(s, d, []Pool{{Name: "lic_x", Pending: 1, Free: 3}, {Name: "lic_y", Free: 2}})
	got := map[int64][]string{}
	for k, ps := range b.Jobs {
		got[k.ID] = ps
	}
	placed := map[int64]bool{}
	for _, p := range d.Placements {
		placed[p.Job.ID] = true
	}
	if !placed[2] || !placed[3] || placed[1] {
		t.Fatalf("the cycle placed %v, want jobs 2 and 3", placed)
	}
	if len(got) != 1 || !slices.Equal(got[1], []string{"lic_x", "lic_y"}) {
		t.Errorf("waiting jobs %v, want job 1 on lic_x and lic_y", got)
	}
	if b.Units["lic_x"] != 1 || b.Units["lic_y"] != 1 {
		t.Errorf("units %v, want lic_x 1 (3 needed, 1 left, 1 asked for) and lic_y 1", b.Units)
	}
	// A slot short: job 1 waits for it too, and is not named.
	s.Hosts = hosts("a 3")
	d = Schedule(s)
	if b := ComputeBorrow(s, d, []Pool{{Name: "lic_x", Free: 3}}); len(b.Jobs) != 0 {
		t.Errorf("with no slot left: waiting jobs %v, want none", b.Jobs)
	}
}
