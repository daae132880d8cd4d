package controller

import (
	"math/rand"
	"slices"
	"testing"

	"xce/lib/api"
)

// The kept job list is the full sort of every job after any mix of new
// jobs, changed jobs and specs, jobs cleaned away and queue priorities
// changed, whether queried after each change or after many.
func TestJobOrderMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	c := &Controller{jobs: map[key]*rec{}, byID: map[int64][]*rec{}, queues: map[string]*queue{}}
	names := []string{"normal", "short", "night"}
	for i, n := range names {
		c.queues[n] = &queue{q: &api.Queue{Name: n, Priority: int32(10 * i)}}
	}
	states := []api.JobState{api.JobState_PEND, api.JobState_PSUSP, api.JobState_RUN, api.JobState_SSUSP, api.JobState_DONE, api.JobState_EXIT}
	effOf := func() *effSpec {
		return &effSpec{queue: names[rng.Intn(len(names))], userPriority: int32(rng.Intn(3))}
	}
	jobOf := func(id int64, idx int32) *api.Job {
		return &api.Job{JobId: id, ArrayIndex: idx, State: states[rng.Intn(len(states))],
			Order: rng.Int63n(50), EndTime: rng.Int63n(50)}
	}
	nextID := int64(1)
	var live []*rec
	check := func(step int) {
		t.Helper()
		got := c.jobsInOrder()
		want := make([]orderKey, 0, len(c.jobs))
		for _, r := range c.jobs {
			want = append(want, c.orderKeyOf(r))
		}
		slices.SortFunc(want, func(a, b orderKey) int { return compareKeys(&a, &b) })
		if len(got) != len(want) {
			t.Fatalf("step %d: %d jobs in order, %d jobs", step, len(got), len(want))
		}
		for i := range got {
			if k := c.orderKeyOf(got[i].r); k != want[i] || got[i].key != k {
				t.Fatalf("step %d: entry %d is %+v (placed as %+v), want %+v", step, i, k, got[i].key, want[i])
			}
		}
	}
	for step := 0; step < 4000; step++ {
		switch op := rng.Intn(10); {
		case op < 4 || len(live) == 0: // a submission: a job or a small array
			n := 1 + rng.Intn(3)
			eff := effOf()
			for i := range n {
				idx := int32(0)
				if n > 1 {
					idx = int32(i + 1)
				}
				r := &rec{job: jobOf(nextID, idx), eff: eff}
				c.insert(r)
				live = append(live, r)
			}
			nextID++
		case op < 7: // a job changes state, order or end
			r := live[rng.Intn(len(live))]
			r.job = jobOf(r.job.JobId, r.job.ArrayIndex)
		case op < 8: // a new effective spec (bmod, bswitch)
			live[rng.Intn(len(live))].eff = effOf()
		case op < 9: // clean
			i := rng.Intn(len(live))
			r := live[i]
			delete(c.jobs, key{r.job.JobId, r.job.ArrayIndex})
			c.unordered(r.job)
			live = slices.Delete(live, i, i+1)
		default: // reconfiguration
			q := c.queues[names[rng.Intn(len(names))]]
			q.q = &api.Queue{Name: q.q.Name, Priority: int32(rng.Intn(30))}
		}
		if rng.Intn(20) == 0 {
			check(step)
		}
	}
	check(-1)
}
