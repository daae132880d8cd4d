package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestBackfill(t *testing.T) {
	s := snapshot(hosts("a 4", "b 4 r15s=1"),
		mkJob(1, "", "n=8"),         // needs both hosts: starts when r1 ends
		mkJob(2, "", "W=30m"),       // ends before: backfills
		mkJob(3, "", "W=2h", "u=b"), // would delay job 1
		mkJob(4, "", "u=c"),         // no run limit: would delay job 1
	)
	s.Queues[0].SlotReserve = true
	s.Running = []Alloc{
		mkRun(10, "bob normal 10m 1h a*2", "", 0),  // ends at +50m
		mkRun(11, "bob normal 10m 20m b*1", "", 0), // ends at +10m
	}
	d := check(t, s, `
1: PEND Not enough job slot(s): 5 free on 2 usable hosts, the job needs 8 | Slots reserved on 2 hosts; estimated start 2026-01-05T09:50:00Z
2: a*1
3: PEND Job slots reserved for a higher-priority pending job: 2 hosts
4: PEND Job slots reserved for a higher-priority pending job: 2 hosts`)
	if len(d.Reservations) != 1 || !d.Reservations[0].Start.Equal(t0.Add(50*time.Minute)) {
		t.Fatalf("reservations: %+v", d.Reservations)
	}
}

// TestBackfillSameBucket: jobs identical but for their run limit share a
// bucket; a long one that would delay the reserved job does not stop a
// shorter one behind it.
func TestBackfillSameBucket(t *testing.T) {
	s := snapshot(hosts("a 4"),
		mkJob(1, "", "n=4"),
		mkJob(2, "", "W=2h"),
		mkJob(3, "", "W=3h"),
		mkJob(4, "", "W=20m"),
	)
	s.Queues[0].SlotReserve = true
	s.Running = []Alloc{mkRun(10, "bob normal 10m 1h a*2", "", 0)}
	check(t, s, `
1: PEND Not enough job slot(s): 2 free on 1 usable host, the job needs 4 | Slots reserved on 1 host; estimated start 2026-01-05T09:50:00Z
2: PEND Job slots reserved for a higher-priority pending job: 1 host
3: PEND Job slots reserved for a higher-priority pending job: 1 host
4: a*1`)
}

func TestBackfillOtherHostsFree(t *testing.T) {
	// Host c is not needed by the reservation: anything may run there.
	s := snapshot(hosts("a 4", "b 4 r15s=1", "c 1 r15s=2 type=SMALL"),
		mkJob(1, "type==X86_64", "n=8"),
		mkJob(2, "type==any"),
	)
	s.Queues[0].SlotReserve = true
	s.Running = []Alloc{mkRun(10, "bob normal 10m 1h a*2", "", 0)}
	check(t, s, `
1: PEND Not enough job slot(s): 6 free on 2 usable hosts, the job needs 8 | Job's resource requirements not satisfied: 1 host | select[type == X86_64]: not satisfied on 1 host | Slots reserved on 2 hosts; estimated start 2026-01-05T09:50:00Z
2: c*1`)
}

// TestBackfillNeverDelays: on random clusters, the jobs placed in a cycle
// never move a reserved job's start later: scheduling again with them
// running gives the same or an earlier start.
func TestBackfillNeverDelays(t *testing.T) {
	checked, backfilled := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		var hs []Host
		nh := 2 + r.IntN(6)
		for i := 0; i < nh; i++ {
			hs = append(hs, mkHost(fmt.Sprintf("h%d %d r15s=%d", i, 1+r.IntN(8), r.IntN(3))))
		}
		s := snapshot(hs)
		s.Queues[0].SlotReserve = true
		total := 0
		for i, h := range hs {
			total += h.MaxSlots
			n := r.IntN(h.MaxSlots + 1)
			if n == 0 {
				continue
			}
			lim := "-"
			if r.IntN(4) > 0 {
				lim = fmt.Sprintf("%dm", 10+r.IntN(120))
			}
			s.Running = append(s.Running, mkRun(int64(1000+i), fmt.Sprintf("bob normal 5m %s h%d*%d", lim, i, n), "", 0))
		}
		big := mkJob(1, "", fmt.Sprintf("n=%d", total-r.IntN(2)))
		s.Jobs = append(s.Jobs, big)
		for i := 0; i < 10; i++ {
			opts := []string{fmt.Sprintf("n=%d", 1+r.IntN(3))}
			if r.IntN(3) > 0 {
				opts = append(opts, fmt.Sprintf("W=%dm", 5+r.IntN(120)))
			}
			s.Jobs = append(s.Jobs, mkJob(int64(2+i), "", opts...))
		}
		d1 := Schedule(s)
		if len(d1.Reservations) == 0 || d1.Reservations[0].Job != big.Key {
			continue
		}
		checked++
		backfilled += len(d1.Placements)
		start1 := d1.Reservations[0].Start
		// Next cycle: the placed jobs run.
		s2 := *s
		s2.Running = append([]Alloc(nil), s.Running...)
		s2.Jobs = nil
		placed := map[JobKey]bool{}
		for _, p := range d1.Placements {
			placed[p.Job] = true
			var lim time.Duration
			for _, j := range s.Jobs {
				if j.Key == p.Job {
					lim = j.RunLimit
				}
			}
			s2.Running = append(s2.Running, Alloc{Job: p.Job, User: "alice", Queue: "normal", Start: s.Now, RunLimit: lim, Hosts: p.Hosts})
		}
		for _, j := range s.Jobs {
			if !placed[j.Key] {
				s2.Jobs = append(s2.Jobs, j)
			}
		}
		d2 := Schedule(&s2)
		if len(d2.Reservations) == 0 || d2.Reservations[0].Job != big.Key {
			t.Fatalf("seed %d: no reservation in the second cycle: %+v", seed, d2)
		}
		start2 := d2.Reservations[0].Start
		later := start2.After(start1) || (start1.IsZero() != start2.IsZero() && start2.IsZero())
		if start1.IsZero() && start2.IsZero() {
			later = false
		}
		if later {
			t.Errorf("seed %d: the reserved job's start moved from %v to %v\n%s", seed, start1, start2, render(s, d1))
		}
	}
	t.Logf("%d clusters with a reservation, %d jobs placed beside it", checked, backfilled)
	if checked < 50 || backfilled < 50 {
		t.Errorf("only %d random clusters had a reservation", checked)
	}
}

// TestNoReservationForMemory: a job that waits for memory, not slots,
// holds nothing, and other jobs keep running.
func TestNoReservationForMemory(t *testing.T) {
	s := snapshot(hosts("a 4 mem=1000"), mkJob(1, "rusage[mem=8000]"), mkJob(2, ""))
	s.Queues[0].SlotReserve = true
	d := check(t, s, `
1: PEND Job's requirements for resource reservation not satisfied: 1 host | rusage[mem=8000]: 1 host has less than 8000 MB unreserved
2: a*1`)
	if len(d.Reservations) != 0 {
		t.Errorf("reservations: %+v", d.Reservations)
	}
}
