package sched

import (
	"slices"
	"testing"
)

// A suspended job resumes only within its limits, as a dispatch would:
// its user's total (which suspended jobs leave) is full again, or its
// queue's slot limit was lowered.
func TestPreemptResumeWithinLimits(t *testing.T) {
	run := []Alloc{
		mkRun(1, "bob low 10m - a*2", "", 0),
		mkRun(2, "bob normal 5m - a*4", "", 0),
	}
	run[0].Preempt = AllocPreempt{Suspended: true, Count: 1}
	s := preSnap(hosts("a 8"), run)
	s.Limits = []Limit{{Name: "users", Per: PerUser, Slots: 4}}
	if d := Schedule(s); len(d.Resumes) != 0 {
		t.Errorf("resumed %v past bob's limit of 4 slots (4 running)", d.Resumes)
	}
	s.Limits[0].Slots = 6
	if d := Schedule(s); !slices.Equal(d.Resumes, []JobKey{{ID: 1}}) {
		t.Errorf("resumes %v, want [1] within the limit", d.Resumes)
	}
	// The low queue's slot limit, lowered below what it has.
	s = preSnap(hosts("a 8"), []Alloc{run[0], mkRun(3, "alice low 5m - a*2", "", 0)})
	s.Queues[2].SlotLimit = 2
	if d := Schedule(s); len(d.Resumes) != 0 {
		t.Errorf("resumed %v past the queue's slot limit", d.Resumes)
	}
	s.Queues[2].SlotLimit = 4
	if d := Schedule(s); !slices.Equal(d.Resumes, []JobKey{{ID: 1}}) {
		t.Errorf("resumes %v, want [1] within the queue's limit", d.Resumes)
	}
}

// A job held back by a limit that suspended jobs leave preempts the
// jobs counted in it: a user's total always, a user group's with
// PREEMPT_FOR=GROUP_MAX, per host with HOST_JLU, per processor with
// USER_JLP; otherwise it pends.
func TestPreemptForLimits(t *testing.T) {
	run := []Alloc{mkRun(1, "bob low 10m - a*2", "", 0)}
	groups := map[string][]string{"grp": {"bob", "carol"}}
	cases := []struct {
		name  string
		lim   Limit
		user  string
		set   func(*PreemptParams)
		fresh bool // without set, the job pends
	}{
		{"user total", Limit{Name: "u", Per: PerUser, Slots: 2}, "bob", nil, false},
		{"single user", Limit{Name: "u", Users: []string{"bob"}, Slots: 2}, "bob", nil, false},
		{"GROUP_MAX", Limit{Name: "g", Users: []string{"grp"}, Slots: 2}, "carol", func(p *PreemptParams) { p.GroupMax = true }, true},
		{"HOST_JLU", Limit{Name: "h", Users: []string{"grp"}, Per: PerHost, Slots: 2}, "carol", func(p *PreemptParams) { p.HostJLU = true }, true},
		{"USER_JLP", Limit{Name: "p", PerUsers: []string{"all"}, Per: PerHost, SlotsPerProcessor: 0.5}, "bob", func(p *PreemptParams) { p.UserJLP = true }, true},
		{"GROUP_JLP", Limit{Name: "p", Users: []string{"grp"}, Per: PerHost, SlotsPerProcessor: 0.5}, "carol", func(p *PreemptParams) { p.GroupJLP = true }, true},
	}
	for _, tc := range cases {
		s := preSnap(hosts("a 4 ncpus=4"), run, mkJob(10, "", "q=urgent", "u="+tc.user))
		s.UserGroups = groups
		s.Limits = []Limit{tc.lim}
		if tc.fresh {
			if d := Schedule(s); len(d.Placements) != 0 {
				t.Errorf("%s: placed %v without the keyword (the limit counts suspended jobs)", tc.name, d.Placements)
			}
			tc.set(&s.Preempt)
		}
		d := check(t, s, "10: a*1")
		if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}}) {
			t.Errorf("%s: victims %v, want [1]", tc.name, v)
		}
	}
	// A limit that also names a queue is not a user's: no preemption.
	s := preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent", "u=bob"))
	s.Limits = []Limit{{Name: "uq", Per: PerUser, Queues: []string{"low", "urgent"}, Slots: 2}}
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Errorf("placed %v past a user-and-queue limit", d.Placements)
	}
}

// PREEMPT_FOR=OPTIMAL_MINI_JOB suspends the fewest jobs: the one that
// frees the most slots first, instead of the most recently started. In
// either order only the victims needed are kept (MINI_JOB): a victim
// taken first whose slots the job no longer needs keeps running.
func TestPreemptOptimalMiniJob(t *testing.T) {
	run := []Alloc{
		mkRun(1, "bob low 5m - a*1", "", 0),
		mkRun(2, "bob low 10m - a*1", "", 0),
		mkRun(3, "bob low 20m - a*2", "", 0),
	}
	s := preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent", "n=2"))
	d := check(t, s, "10: a*2")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}, {ID: 2}}) {
		t.Errorf("victims %v, want [1 2] in LSF's default order", v)
	}
	s.Preempt.OptimalMiniJob = true
	d = check(t, s, "10: a*2")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 3}}) {
		t.Errorf("victims %v, want [3] (the fewest)", v)
	}
	// Only enough: job 1 (taken first) frees one slot, job 3 then three;
	// the job needs three, so job 1 keeps running.
	run = []Alloc{mkRun(1, "bob low 5m - a*1", "", 0), mkRun(3, "bob low 20m - a*3", "", 0)}
	s = preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent", "n=3"))
	d = check(t, s, "10: a*3")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 3}}) {
		t.Errorf("victims %v, want [3] only", v)
	}
}

// A JOBS limit on hosts counts running jobs only (LSF): it does not
// block preemption on its host, and a suspended job leaves it.
func TestPreemptHostJobsLimit(t *testing.T) {
	run := []Alloc{mkRun(1, "bob low 10m - a*1", "", 0)}
	s := preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent"))
	s.Limits = []Limit{{Name: "hj", Per: PerHost, Jobs: 1}}
	d := check(t, s, "10: a*1")
	if v := victimsOf(d, JobKey{ID: 10}); !slices.Equal(v, []JobKey{{ID: 1}}) {
		t.Errorf("victims %v, want [1]", v)
	}
	// A cluster-wide JOBS limit counts suspended jobs: nothing to gain.
	s = preSnap(hosts("a 4"), run, mkJob(10, "", "q=urgent"))
	s.Limits = []Limit{{Name: "cj", Jobs: 1}}
	if d := Schedule(s); len(d.Placements) != 0 {
		t.Errorf("placed %v past a cluster-wide JOBS limit", d.Placements)
	}
}
