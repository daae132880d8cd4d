package sched

import (
	"slices"
	"testing"
	"time"
)

// rsvRun is a running job of reservation id.
func rsvRun(a Alloc, id string) Alloc { a.Rsv = id; return a }

func TestAdvRsvSuspendsJobsOnItsSlots(t *testing.T) {
	// Two jobs without a run limit hold 3 of a's 4 slots when r0 (2 of
	// them) opens: its 2-slot job suspends only the most recently started
	// one, which frees enough.
	run := []Alloc{
		mkRun(1, "bob normal 30m - a*2", "", 0),
		mkRun(2, "bob normal 20m - a*1", "", 0),
	}
	mk := func(nosusp bool) *Snapshot {
		s := snapshot(hosts("a 4"), withRsv(mkJob(10, "", "n=2"), "r0"))
		s.Running = slices.Clone(run)
		r := rsv("r0", false, -time.Minute, time.Hour, RsvHost{"a", 2})
		r.NoSusp = nosusp
		s.AdvRsvs = []AdvRsv{r}
		return s
	}
	d := check(t, mk(false), "10: a*2")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2] (the most recently started, enough)", v)
	}
	// -nosusp: the job waits for the slots instead.
	d = check(t, mk(true), "10: PEND Not enough job slot(s): 1 free on 1 usable host, the job needs 2")
	if len(d.Placements) != 0 {
		t.Errorf("placed with -nosusp: %v", d.Placements)
	}
	// A lower queue's job goes first, whatever its start.
	s := mk(false)
	s.Queues = append(s.Queues, Queue{Name: "low", Priority: 10})
	s.Running[0] = mkRun(1, "bob low 30m - a*2", "", 0)
	d = check(t, s, "10: a*2")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}}) {
		t.Errorf("victims %v, want [1] (the lower queue's)", v)
	}
}

func TestAdvRsvSuspendsOnlyOthers(t *testing.T) {
	// Its own job and another open reservation's job are no victims; a
	// job of a reservation whose window is over is.
	s := snapshot(hosts("a 4"), withRsv(mkJob(10, "", "n=2"), "r0"))
	s.Running = []Alloc{
		rsvRun(mkRun(1, "bob normal 10m - a*1", "", 0), "r0"),
		rsvRun(mkRun(2, "bob normal 5m - a*1", "", 0), "r1"),
		rsvRun(mkRun(3, "bob normal 50m - a*1", "", 0), "old"),
		mkRun(4, "bob normal 40m - a*1", "", 0),
	}
	s.AdvRsvs = []AdvRsv{
		rsv("r0", false, -time.Minute, time.Hour, RsvHost{"a", 3}),
		rsv("r1", true, -time.Minute, time.Hour, RsvHost{"a", 1}),
		rsv("old", true, -2*time.Hour, -time.Hour, RsvHost{"a", 3}),
	}
	d := check(t, s, "10: a*2")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 4}, {ID: 3}}) {
		t.Errorf("victims %v, want [4 3]", v)
	}
	// Nothing to gain: a job of an inactive reservation suspends nothing.
	s.Jobs = []Job{withRsv(mkJob(11, "", "n=2"), "later")}
	s.AdvRsvs = append(s.AdvRsvs, rsv("later", false, time.Hour, 2*time.Hour, RsvHost{"a", 2}))
	d = check(t, s, "11: PEND Job's reservation is inactive")
	if len(d.Placements) != 0 {
		t.Errorf("an inactive reservation's job suspended: %v", d.Placements)
	}
}

func TestAdvRsvResumeAfterWindow(t *testing.T) {
	// Job 1 was suspended for r0, whose job 2 has ended: inside the
	// window the reserved slots stay r0's, so job 1 stays suspended; once
	// the window has closed it resumes.
	sus := mkRun(1, "bob normal 30m - a*2", "", 0)
	sus.Preempt = AllocPreempt{Suspended: true, Count: 1}
	for _, tc := range []struct {
		from, to time.Duration
		resumed  bool
	}{{-time.Minute, time.Hour, false}, {-2 * time.Hour, -time.Minute, true}} {
		s := snapshot(hosts("a 2"))
		s.Running = []Alloc{sus}
		s.AdvRsvs = []AdvRsv{rsv("r0", false, tc.from, tc.to, RsvHost{"a", 2})}
		d := Schedule(s)
		if got := slices.Contains(d.Resumes, JobKey{ID: 1}); got != tc.resumed {
			t.Errorf("window %v..%v: resumed %v, want %v", tc.from, tc.to, got, tc.resumed)
		}
	}
}

func TestAdvRsvQueueBeforeWindow(t *testing.T) {
	// r0 (-q short) opens in an hour: a short job without a run limit may
	// start on its slots (it is suspended when r0's jobs need them), a
	// normal one may not.
	s := snapshot(hosts("a 2"), mkJob(1, ""), mkJob(2, "", "q=short"))
	s.Queues = append(s.Queues, Queue{Name: "short", Priority: 30})
	r := rsv("r0", false, time.Hour, 2*time.Hour, RsvHost{"a", 2})
	r.Queues = []string{"short"}
	s.AdvRsvs = []AdvRsv{r}
	check(t, s, `
1: PEND Not enough job slot(s) while advance reservation is active: 1 host
2: a*1
`)
	// Once it opens, its job suspends the short job.
	s = snapshot(hosts("a 2"), withRsv(mkJob(3, "", "n=2"), "r0"))
	s.Queues = append(s.Queues, Queue{Name: "short", Priority: 30})
	s.Running = []Alloc{mkRun(2, "bob short 70m - a*1", "", 0)}
	r = rsv("r0", false, -10*time.Minute, time.Hour, RsvHost{"a", 2})
	r.Queues = []string{"short"}
	s.AdvRsvs = []AdvRsv{r}
	d := check(t, s, "3: a*2")
	if v := victimsOf(d, JobKey{ID: 3}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2]", v)
	}
}
