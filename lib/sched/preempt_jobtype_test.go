package sched

import (
	"slices"
	"testing"
)

// A job that starts in slots a reservation holds (backfill) is marked
// so; one that starts in free slots is not.
func TestPlacementBackfill(t *testing.T) {
	s := snapshot(hosts("a 4", "b 4"), mkJob(1, "", "n=4", "m=a"), mkJob(4, "", "W=20m", "m=a"), mkJob(5, "", "m=b"))
	s.Queues[0].SlotReserve = true
	s.Running = []Alloc{mkRun(10, "bob normal 10m 1h a*2", "", 0)}
	d := check(t, s, `
1: PEND Not enough job slot(s): 2 free on 1 usable host, the job needs 4 | Not specified in job submission: 1 host | Slots reserved on 1 host; estimated start 2026-01-05T09:50:00Z
4: a*1
5: b*1`)
	for _, p := range d.Placements {
		if want := p.Job.ID == 4; p.Backfill != want {
			t.Errorf("job %v: Backfill %v, want %v", p.Job, p.Backfill, want)
		}
	}
}

// PREEMPT_JOBTYPE=BACKFILL: a job that started backfilling is preempted
// only then; by default the preemptor takes another victim or pends.
func TestPreemptBackfillJob(t *testing.T) {
	run := []Alloc{mkRun(1, "bob low 5m 1h a*1", "", 0), mkRun(2, "bob low 10m - a*1", "", 0)}
	run[0].Preempt.Backfill = true
	s := preSnap(hosts("a 2"), run, mkJob(10, "", "q=urgent"))
	d := check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2]: job 1 backfills", v)
	}
	s.Preempt.Backfill = true
	d = check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}}) {
		t.Errorf("victims %v, want [1] (the most recent) with PREEMPT_JOBTYPE=BACKFILL", v)
	}
}

// An exclusive victim suspended where its exclusive preemptor runs
// (PREEMPT_JOBTYPE=EXCLUSIVE): giving the victim's use back leaves the
// preemptor's exclusive use of the host, and of its GPU, in place.
func TestPreemptExclusiveStaysExclusive(t *testing.T) {
	run := []Alloc{mkRun(1, "bob low 20m - a*1 x", "", 0), mkRun(2, "bob urgent 5m - a*1 x", "", 0)}
	run[0].Preempt = AllocPreempt{Suspended: true, Count: 1}
	s := preSnap(hosts("a 4"), run, mkJob(10, "", "q=normal"))
	s.Preempt.Exclusive = true
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Errorf("placed %v beside an exclusive job", d.Placements)
	}
	g := []Alloc{gpuRun(1, "a", true, 0, 0), gpuRun(2, "a", true, 0, 0)}
	g[0].Queue, g[0].Preempt = "low", AllocPreempt{Suspended: true, Count: 1}
	g[1].Queue = "urgent"
	s = preSnap([]Host{gpuHost("a 8", v100)}, g, gpuJob(10, "num=1", "q=normal"))
	s.Preempt.Resources = []string{"ngpus_physical"}
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Errorf("placed %v on a GPU held exclusively", d.Placements)
	}
}
