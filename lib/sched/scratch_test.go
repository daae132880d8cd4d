package sched

import (
	"reflect"
	"testing"
	"time"
)

// TestScratchSameDecision: one Scratch reused over cycles of snapshots of
// different sizes and contents gives the decisions a cycle without it
// gives, and the running jobs of one cycle leave nothing behind for the
// next.
func TestScratchSameDecision(t *testing.T) {
	sc := &Scratch{}
	for i, size := range []int{300, 50, 400, 400, 120} {
		s := bigSnapshot(uint64(i+1), size, 8*size, 40, 9)
		s.Queues[0].SlotReserve = i%2 == 0
		for k := range s.Jobs {
			if k%3 == 0 {
				s.Jobs[k].RunLimit = time.Duration(1+k%50) * time.Minute
			}
		}
		// Run the first cycle's placements as running jobs, so that the
		// second cycle on the same snapshot has allocations to account.
		first := Schedule(s)
		for _, p := range first.Placements[:len(first.Placements)/2] {
			s.Running = append(s.Running, Alloc{Job: p.Job, User: "u1", Queue: "normal", Start: t0, RunLimit: time.Hour, Hosts: p.Hosts})
		}
		want := Schedule(s)
		withScratch := *s
		withScratch.Scratch = sc
		got := Schedule(&withScratch)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("snapshot %d (%d hosts): decisions differ with a scratch", i, size)
		}
		if len(want.Placements) == 0 || len(want.Pending) == 0 {
			t.Errorf("snapshot %d: a weak test: %d placed, %d pending", i, len(want.Placements), len(want.Pending))
		}
	}
}

// TestNoReasonsSameDecision: without reasons the placements and
// reservations are the same, and Pending is empty.
func TestNoReasonsSameDecision(t *testing.T) {
	for i, size := range []int{300, 80} {
		s := bigSnapshot(uint64(i+11), size, 8*size, 40, 9)
		s.Queues[0].SlotReserve = true
		for k := range s.Jobs {
			if k%2 == 0 {
				s.Jobs[k].RunLimit = time.Duration(1+k%50) * time.Minute
			}
		}
		want := Schedule(s)
		quiet := *s
		quiet.NoReasons = true
		got := Schedule(&quiet)
		if !reflect.DeepEqual(want.Placements, got.Placements) || !reflect.DeepEqual(want.Reservations, got.Reservations) {
			t.Fatalf("snapshot %d: decisions differ without reasons", i)
		}
		if len(got.Pending) != 0 {
			t.Errorf("snapshot %d: %d pending reasons without reasons", i, len(got.Pending))
		}
		if len(want.Placements) == 0 || len(want.Reservations) == 0 {
			t.Errorf("snapshot %d: a weak test: %d placed, %d reservations", i, len(want.Placements), len(want.Reservations))
		}
	}
}
