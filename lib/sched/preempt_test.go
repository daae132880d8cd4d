package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// preSnap: queues urgent (70, preemptive), normal (30) and low (10,
// preemptable by any higher queue... only through urgent's "lower").
func preSnap(hs []Host, run []Alloc, jobs ...Job) *Snapshot {
	s := snapshot(hs, jobs...)
	s.Queues = []Queue{
		{Name: "urgent", Priority: 70, Preempt: QueuePreempt{Preemptive: []string{"lower"}}},
		{Name: "normal", Priority: 30},
		{Name: "low", Priority: 10},
	}
	s.Running = run
	return s
}

func victimsOf(d *Decision, k JobKey) []JobKey {
	for _, p := range d.Placements {
		if p.Job == k {
			return p.Victims
		}
	}
	return nil
}

func TestPreemptSuspendsYoungestLowest(t *testing.T) {
	run := []Alloc{
		mkRun(1, "bob normal 30m - a*2", "", 0),
		mkRun(2, "bob low 20m - a*1", "", 0),
		mkRun(3, "bob low 10m - a*1", "", 0),
	}
	s := preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent"))
	d := check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 3}}) {
		t.Errorf("victims %v, want [3] (the lowest queue, most recently started)", v)
	}
	// Two slots: both low jobs before the normal one.
	s = preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent", "n=2"))
	d = check(t, s, "10: a*2")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 3}, {ID: 2}}) {
		t.Errorf("victims %v, want [3 2]", v)
	}
	// A queue that may not preempt does not; a pending job of a lower
	// queue never preempts.
	s = preSnap(hosts("a 4"), run, mkJob(10, "", "q=normal"), mkJob(11, "", "q=low"))
	d = Schedule(s)
	if len(d.Placements) != 0 {
		t.Errorf("placed %v without a preemptive queue", d.Placements)
	}
}

func TestPreemptOnlyWhatHelps(t *testing.T) {
	// Host a lacks memory for the job whatever is suspended (suspended
	// jobs keep their memory); b has a victim that frees a slot.
	hs := hosts("a 2 mem=1000", "b 2 mem=16000")
	run := []Alloc{
		mkRun(1, "bob low 10m - a*2", "", 0),
		mkRun(2, "bob low 20m - b*2", "", 0),
	}
	s := preSnap(hs, run, mkJob(10, "rusage[mem=4000]", "q=urgent"))
	d := check(t, s, "10: b*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2]", v)
	}
	// Memory-bound: the host's memory is held by a low job; only with
	// mem in PREEMPTABLE_RESOURCES does suspending it help.
	hs = hosts("a 4 mem=8000")
	run = []Alloc{mkRun(1, "bob low 10m - a*1", "rusage[mem=6000]", 0)}
	s = preSnap(hs, run, mkJob(10, "rusage[mem=4000]", "q=urgent"))
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Fatalf("placed without releasable memory: %v", d.Placements)
	}
	s.Preempt.Resources = []string{"mem"}
	d = check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}}) {
		t.Errorf("victims %v, want [1]", v)
	}
}

func TestPreemptNoVictimsWhenItCannotFit(t *testing.T) {
	run := []Alloc{mkRun(1, "bob low 10m - a*1", "", 0), mkRun(2, "bob normal 10m - a*1", "", 0)}
	s := preSnap(hosts("a 2"), run, mkJob(10, "", "q=urgent", "n=3"))
	d := Schedule(s)
	if len(d.Placements) != 0 {
		t.Errorf("placed %v", d.Placements)
	}
}

func TestPreemptMaxAndPref(t *testing.T) {
	run := []Alloc{
		mkRun(1, "bob low 10m - a*1", "", 0),
		mkRun(2, "bob normal 20m - a*1", "", 0),
	}
	run[0].Preempt.Count = 2
	s := preSnap(hosts("a 2"), run, mkJob(10, "", "q=urgent"))
	s.Queues[2].Preempt.MaxJobPreempt = 2
	d := check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2]: job 1 reached MAX_JOB_PREEMPT", v)
	}
	// Preference levels: normal+2 before low+1.
	run[0].Preempt.Count = 0
	s = preSnap(hosts("a 2"), run, mkJob(10, "", "q=urgent"))
	s.Queues[0].Preempt.Preemptive = []string{"low+1", "normal+2"}
	d = check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2] (preference level)", v)
	}
	// PREEMPTABLE[] alone lets any higher queue preempt.
	s = preSnap(hosts("a 2"), run, mkJob(10, "", "q=normal"))
	s.Queues[0].Preempt.Preemptive = nil
	s.Queues[2].Preempt.Preemptable = []string{"higher"}
	d = check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}}) {
		t.Errorf("victims %v, want [1]", v)
	}
	// NO_PREEMPT_RUN_TIME protects a young job; PREEMPT_DELAY holds the
	// preemptor back.
	s = preSnap(hosts("a 2"), run, mkJob(10, "", "q=urgent"))
	s.Queues[2].Preempt.NoPreemptRunTime = 15 * time.Minute
	d = check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 2}}) {
		t.Errorf("victims %v, want [2]", v)
	}
	s = preSnap(hosts("a 2"), run, mkJob(10, "", "q=urgent"))
	s.Queues[0].Preempt.Delay = 5 * time.Minute
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Errorf("preempted within PREEMPT_DELAY: %v", d.Placements)
	}
}

func TestPreemptResume(t *testing.T) {
	// Job 1 was suspended by preemption; its slots are free again. It
	// resumes before the low queue's pending job, which then pends.
	run := []Alloc{mkRun(1, "bob low 10m - a*2", "", 0)}
	run[0].Preempt = AllocPreempt{Suspended: true, Count: 1}
	s := preSnap(hosts("a 2"), run, mkJob(10, "", "q=low", "n=2"))
	d := Schedule(s)
	if !slices.Equal(d.Resumes, []JobKey{{ID: 1}}) || len(d.Placements) != 0 {
		t.Errorf("resumes %v placements %v, want job 1 resumed and nothing placed", d.Resumes, d.Placements)
	}
	// A job of a higher queue takes the slots first; the suspended job
	// stays suspended.
	s = preSnap(hosts("a 2"), run, mkJob(10, "", "q=normal", "n=2"))
	d = Schedule(s)
	if len(d.Resumes) != 0 || len(d.Placements) != 1 {
		t.Errorf("resumes %v placements %v", d.Resumes, d.Placements)
	}
}

// TestPreemptSimulation runs a long random workload through the cycle
// with three queues, the top one preemptive, suspending and resuming as
// the decisions say, and checks after every cycle: no host over its
// slots counting running jobs only, and a suspended job never waits
// behind a job of lower priority (no job of a lower or equal-priority
// queue started or runs on one of its hosts while it could have resumed).
func TestPreemptSimulation(t *testing.T) {
	nHosts, nJobs := 20, 700
	if testing.Short() {
		nHosts, nJobs = 15, 500
	}
	r := rand.New(rand.NewPCG(7, 3))
	var hs []Host
	for i := range nHosts {
		hs = append(hs, mkHost(fmt.Sprintf("h%03d %d", i, 4)))
	}
	queues := []string{"urgent", "normal", "low"}
	prio := map[string]int{"urgent": 70, "normal": 30, "low": 10}
	type jobRec struct {
		Job
		runs   time.Duration
		left   time.Duration // remaining run time
		alloc  *Alloc
		susp   bool
		count  int
		done   bool
		from   time.Time // running since (for left)
		suspAt time.Time
		since  time.Time // got its slots (started or resumed)
	}
	jobs := make([]*jobRec, nJobs)
	now := t0
	for i := range jobs {
		q := queues[0]
		switch x := r.IntN(10); {
		case x >= 7:
			q = "low"
		case x >= 2:
			q = "normal"
		}
		j := mkJob(int64(i+1), "", "q="+q, fmt.Sprintf("n=%d", 1+r.IntN(3)))
		j.Submit = now.Add(time.Duration(i) * 4 * time.Second)
		d := time.Duration(1+r.IntN(60)) * time.Minute
		jobs[i] = &jobRec{Job: j, runs: d, left: d}
	}
	byKey := map[JobKey]*jobRec{}
	for _, j := range jobs {
		byKey[j.Key] = j
	}
	preempted, resumed := 0, 0
	for step := 0; step < 20000; step++ {
		// Advance to the next event: a submission or an end.
		next := time.Time{}
		for _, j := range jobs {
			switch {
			case j.done:
			case j.alloc == nil && !j.Submit.Before(now) && !j.Submit.Equal(now):
				if next.IsZero() || j.Submit.Before(next) {
					next = j.Submit
				}
			case j.alloc != nil && !j.susp:
				if e := j.from.Add(j.left); next.IsZero() || e.Before(next) {
					next = e
				}
			}
		}
		if next.IsZero() {
			break
		}
		for _, j := range jobs {
			if j.alloc != nil && !j.susp && !j.done {
				j.left -= next.Sub(j.from)
				j.from = next
				if j.left <= 0 {
					j.done, j.alloc = true, nil
				}
			}
		}
		now = next
		s := &Snapshot{Now: now, Schema: testSchema, Hosts: hs, NoReasons: step%2 == 0}
		for _, q := range queues {
			s.Queues = append(s.Queues, Queue{Name: q, Priority: prio[q]})
		}
		s.Queues[0].Preempt.Preemptive = []string{"lower"}
		s.Queues[1].Preempt.Preemptable = []string{"urgent"}
		s.Queues[2].Preempt.MaxJobPreempt = 3
		for _, j := range jobs {
			switch {
			case j.done:
			case j.alloc != nil:
				a := *j.alloc
				a.Preempt = AllocPreempt{Suspended: j.susp, Count: j.count}
				s.Running = append(s.Running, a)
			case !j.Submit.After(now):
				s.Jobs = append(s.Jobs, j.Job)
			}
		}
		d := Schedule(s)
		for _, k := range d.Resumes {
			j := byKey[k]
			if !j.susp {
				t.Fatalf("step %d: resumed %v, not suspended", step, k)
			}
			j.susp, j.from, j.since = false, now, now
			resumed++
		}
		for _, p := range d.Placements {
			for _, v := range p.Victims {
				vj := byKey[v]
				if vj.alloc == nil || vj.susp {
					t.Fatalf("step %d: victim %v is not running", step, v)
				}
				if prio[vj.Queue] >= prio[byKey[p.Job].Queue] {
					t.Fatalf("step %d: %v (%s) preempted %v (%s)", step, p.Job, byKey[p.Job].Queue, v, vj.Queue)
				}
				vj.susp, vj.suspAt = true, now
				vj.count++
				preempted++
			}
			j := byKey[p.Job]
			j.alloc = &Alloc{Job: j.Key, User: j.User, Queue: j.Queue, Project: j.Project, Start: now, Hosts: p.Hosts}
			j.from, j.since = now, now
		}
		// Invariants.
		used := map[string]int{}
		for _, j := range jobs {
			if j.alloc != nil && !j.susp && !j.done {
				for _, ha := range j.alloc.Hosts {
					used[ha.Host] += ha.Slots
				}
			}
		}
		for _, h := range hs {
			if used[h.Name] > h.MaxSlots {
				t.Fatalf("step %d: host %s runs %d slots of %d", step, h.Name, used[h.Name], h.MaxSlots)
			}
		}
		onHost := map[string][]*jobRec{}
		for _, o := range jobs {
			if o.alloc != nil && !o.susp && !o.done {
				for _, oa := range o.alloc.Hosts {
					onHost[oa.Host] = append(onHost[oa.Host], o)
				}
			}
		}
		for _, j := range jobs {
			if !j.susp || j.done || j.suspAt.Equal(now) {
				continue
			}
			// The running jobs that got their slots in this cycle while
			// of lower priority (started or resumed), or of the same
			// priority (started): without them, would it have resumed?
			blocked, fits := false, true
			for _, ha := range j.alloc.Hosts {
				run, behind := 0, 0
				for _, o := range onHost[ha.Host] {
					for _, oa := range o.alloc.Hosts {
						if oa.Host != ha.Host {
							continue
						}
						run += oa.Slots
						if prio[o.Queue] < prio[j.Queue] && o.since.Equal(now) || prio[o.Queue] == prio[j.Queue] && o.alloc.Start.Equal(now) {
							behind += oa.Slots
						}
					}
				}
				if 4-run+behind < ha.Slots {
					fits = false
				}
				// On this host they took what it needs.
				blocked = blocked || 4-run < ha.Slots && behind > 0
			}
			if blocked && fits {
				t.Fatalf("step %d: suspended job %v (%s) waits behind jobs of lower priority", step, j.Key, j.Queue)
			}
		}
	}
	for _, j := range jobs {
		if !j.done {
			t.Fatalf("job %v never finished (suspended %v)", j.Key, j.susp)
		}
	}
	if preempted == 0 || resumed == 0 {
		t.Errorf("a weak test: %d preempted, %d resumed", preempted, resumed)
	}
	t.Logf("%d jobs, %d preemptions, %d resumes", nJobs, preempted, resumed)
}
