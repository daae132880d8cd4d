package sched

import (
	"reflect"
	"testing"
	"time"
)

// TestOnlyPlacementsSameDecision: over cycles that fill a cluster (the
// placements of each cycle run in the next, some jobs end), a cycle with
// OnlyPlacements, which skips the jobs that cannot fit and stops once no
// slot is free, places the same jobs on the same hosts as a full one;
// with one Scratch over all the cycles (which keeps the hosts' values
// from one to the next) too.
func TestOnlyPlacementsSameDecision(t *testing.T) {
	skipped := 0
	sc := &Scratch{}
	for i, size := range []int{200, 60} {
		s := bigSnapshot(uint64(i+21), size, 12*size, 40, 9)
		s.Queues[0].SlotReserve = i == 0
		s.Queues[1].SlotReserve = i == 1
		for k := range s.Jobs {
			if k%2 == 0 {
				s.Jobs[k].RunLimit = time.Duration(1+k%50) * time.Minute
			}
			if k%7 == 0 {
				s.Jobs[k].MinSlots = 24 // more than a host: several hosts
			}
		}
		for cyc := range 12 {
			want := Schedule(s)
			quiet := *s
			quiet.NoReasons, quiet.OnlyPlacements, quiet.Scratch = true, true, sc
			got := Schedule(&quiet)
			if !reflect.DeepEqual(want.Placements, got.Placements) {
				t.Fatalf("snapshot %d, cycle %d: placements differ with OnlyPlacements", i, cyc)
			}
			if got.Buckets < want.Buckets {
				skipped++
			}
			// The placed jobs run (with a run limit of an hour); every
			// third running job ends.
			placed := map[JobKey]bool{}
			for _, p := range want.Placements {
				placed[p.Job] = true
				s.Running = append(s.Running, Alloc{Job: p.Job, User: "u1", Queue: "normal", Start: s.Now, RunLimit: time.Hour, Hosts: p.Hosts})
			}
			kept := s.Jobs[:0]
			for _, j := range s.Jobs {
				if !placed[j.Key] {
					kept = append(kept, j)
				}
			}
			s.Jobs = kept
			if cyc%3 == 2 {
				run := s.Running[:0]
				for k, a := range s.Running {
					if k%3 != 0 {
						run = append(run, a)
					}
				}
				s.Running = run
			}
			s.Now = s.Now.Add(time.Minute)
		}
	}
	if skipped == 0 {
		t.Error("a weak test: no cycle skipped a job")
	}
}
