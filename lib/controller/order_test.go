package controller

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

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

// A query in parts is the one-part reply cut up: the same jobs in the same
// order, each part with the effective specs its jobs need (an array's
// elements in several parts bring theirs to each), the refs that named no
// job in the first, and one part for an answer with no job.
func TestQueryParts(t *testing.T) {
	c, _ := newTestController(t, 4, -1)
	for i := range 12 {
		spec := &api.JobSpec{Command: "true", Hold: true, JobName: "j" + strconv.Itoa(i)}
		if i == 5 {
			spec.ArraySpec = "[1-9]"
		}
		if _, err := c.Submit(alice, spec); err != nil {
			t.Fatal(err)
		}
	}
	req := &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all"}
	whole := c.Query(alice, req)
	if len(whole.Jobs) != 20 {
		t.Fatalf("%d jobs, want 20", len(whole.Jobs))
	}
	var jobs []*api.Job
	parts := 0
	err := c.QueryParts(alice, req, 7, func(p *api.QueryReplyEncoded) error {
		parts++
		if len(p.Jobs) > 7 || len(p.PendReasons) != len(p.Jobs) || len(p.Usage) != len(p.Jobs) {
			t.Errorf("part %d: %d jobs, %d reasons, %d usage samples", parts, len(p.Jobs), len(p.PendReasons), len(p.Usage))
		}
		have := map[int64]bool{}
		for _, e := range p.Effective {
			have[e.Key] = true
		}
		for _, j := range p.Jobs {
			if !have[j.JobId] {
				t.Errorf("part %d: no effective spec for job %d", parts, j.JobId)
			}
		}
		jobs = append(jobs, p.Jobs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if parts != 3 || len(jobs) != len(whole.Jobs) {
		t.Fatalf("%d parts of %d jobs, want 3 of %d", parts, len(jobs), len(whole.Jobs))
	}
	for i := range jobs {
		if jobs[i] != whole.Jobs[i] {
			t.Fatalf("job %d: %d[%d], want %d[%d]", i, jobs[i].JobId, jobs[i].ArrayIndex, whole.Jobs[i].JobId, whole.Jobs[i].ArrayIndex)
		}
	}
	parts = 0
	missing := &api.JobRef{JobId: 99999, ArrayIndex: -1}
	err = c.QueryParts(alice, &api.QueryRequest{Refs: []*api.JobRef{missing}}, 7, func(p *api.QueryReplyEncoded) error {
		parts++
		if len(p.Jobs) != 0 || len(p.NotFound) != 1 || p.NotFound[0].JobId != 99999 {
			t.Errorf("query of a missing job: %d jobs, not found %v", len(p.Jobs), p.NotFound)
		}
		return nil
	})
	if err != nil || parts != 1 {
		t.Fatalf("query of a missing job: %d parts, %v", parts, err)
	}
}

// A RecordsOnly query is the same jobs in the same order, without specs,
// pending reasons or usage.
func TestQueryRecordsOnly(t *testing.T) {
	c, _ := newTestController(t, 4, -1)
	for i := range 5 {
		spec := &api.JobSpec{Command: "true", Hold: true, JobName: "j" + strconv.Itoa(i)}
		if i == 2 {
			spec.ArraySpec = "[1-3]"
		}
		if _, err := c.Submit(alice, spec); err != nil {
			t.Fatal(err)
		}
	}
	full := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all"})
	lean := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL, User: "all", RecordsOnly: true})
	if len(full.PendReasons) == 0 || full.PendReasons[0] == "" || len(full.Effective) == 0 {
		t.Fatalf("the full query has no reasons or specs: %v", full)
	}
	if len(lean.Effective)+len(lean.Specs)+len(lean.PendReasons)+len(lean.Usage) != 0 {
		t.Errorf("records only, yet specs, reasons or usage came: %v", lean)
	}
	if len(lean.Jobs) != len(full.Jobs) {
		t.Fatalf("%d jobs, want %d", len(lean.Jobs), len(full.Jobs))
	}
	for i := range lean.Jobs {
		if !proto.Equal(lean.Jobs[i], full.Jobs[i]) {
			t.Errorf("job %d: %v, want %v", i, lean.Jobs[i], full.Jobs[i])
		}
	}
}
