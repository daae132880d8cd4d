package controller

import (
	"strings"
	"sync"
	"testing"

	"xce/lib/api"
)

// A job pack: its jobs submitted in order with consecutive ids, a refused
// one in the middle reported in its place (the rest go on, or with
// stopOnError the pack ends there), a job that depends on an earlier one
// of the pack by name, and MAX_PEND_JOBS counted across the pack; every
// job submitted is in the controller and in the store after a restart.
func TestSubmitPack(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig+`
[users.default]
max_pend_jobs = 6
`, 2, -1)
	specs := []*api.JobSpec{
		{Command: "true", Hold: true, JobName: "first"},
		{Command: "true", Hold: true, Queue: "nosuchqueue"},
		{Command: "true", Hold: true, Dependency: "done(first)"},
		{Command: "true", Hold: true, JobName: "arr", ArraySpec: "[1-2]"},
	}
	res := c.SubmitPack(alice, specs, false)
	if len(res) != len(specs) {
		t.Fatalf("%d results for %d jobs", len(res), len(specs))
	}
	if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "nosuchqueue") {
		t.Errorf("a job to a missing queue: %v", res[1].Err)
	}
	var ids []int64
	for i, r := range res {
		if i == 1 {
			continue
		}
		if r.Err != nil {
			t.Fatalf("job %d of the pack: %v", i, r.Err)
		}
		ids = append(ids, r.Reply.JobId)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Errorf("ids %v are not consecutive in the pack's order", ids)
		}
	}
	if res[3].Reply.ArraySize != 2 {
		t.Errorf("the array's reply: %v", res[3].Reply)
	}
	if st := c.stateOf(ids[1], 0); st != api.JobState_PSUSP {
		t.Errorf("the dependent job: %v", st)
	}

	// With stopOnError the refusal ends the pack; MAX_PEND_JOBS (6, of
	// which 4 are held now) counts the pack's own jobs.
	res = c.SubmitPack(alice, []*api.JobSpec{
		{Command: "true", Hold: true},
		{Command: "true", Hold: true},
		{Command: "true", Hold: true},
		{Command: "true", Hold: true},
	}, true)
	if len(res) != 3 || res[0].Err != nil || res[1].Err != nil || res[2].Err == nil || res[2].Err.Error() != errPendThreshold {
		t.Fatalf("a pack past MAX_PEND_JOBS with stopOnError: %+v", res)
	}
	q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL})
	if len(q.Jobs) != 6 {
		t.Errorf("%d jobs in the controller, want 6", len(q.Jobs))
	}
	if jobs, err := c.store.Load(); err != nil || len(jobs.Jobs) != 6 {
		t.Errorf("the store holds %d jobs (%v), want 6", len(jobs.Jobs), err)
	}
}

// Packs and single submissions at once (run with -race): every job gets
// an id of its own, each pack's ids increase in its order (others may
// come between them), and all are in the controller.
func TestSubmitPackConcurrent(t *testing.T) {
	c, _ := newTestController(t, 2, -1)
	var (
		mu  sync.Mutex
		ids = map[int64]bool{}
		wg  sync.WaitGroup
	)
	add := func(id int64) {
		mu.Lock()
		defer mu.Unlock()
		if ids[id] {
			t.Errorf("id %d handed out twice", id)
		}
		ids[id] = true
	}
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 4 {
				specs := make([]*api.JobSpec, 25)
				for i := range specs {
					specs[i] = &api.JobSpec{Command: "true", Hold: true}
				}
				res := c.SubmitPack(alice, specs, true)
				for i, r := range res {
					if r.Err != nil {
						t.Error(r.Err)
						return
					}
					add(r.Reply.JobId)
					if i > 0 && r.Reply.JobId <= res[i-1].Reply.JobId {
						t.Errorf("a pack's ids out of order: %d after %d", r.Reply.JobId, res[i-1].Reply.JobId)
					}
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				r, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true})
				if err != nil {
					t.Error(err)
					return
				}
				add(r.JobId)
			}
		}()
	}
	wg.Wait()
	if q := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL}); len(q.Jobs) != 4*4*25+4*20 || len(ids) != len(q.Jobs) {
		t.Errorf("%d jobs in the controller, %d ids handed out, want %d", len(q.Jobs), len(ids), 4*4*25+4*20)
	}
}
