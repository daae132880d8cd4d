package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"xce/lib/api"
)

// keptAndCounted returns the job groups as kept and as counted the slow
// way, from every record, at one moment.
func (c *Controller) keptAndCounted() (kept, counted string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s jobStats
	for _, r := range c.jobs {
		s.count(r.job, r.eff, 1)
	}
	return groupsString(c.stats.groups), groupsString(s.groups)
}

func groupsString(gs map[statKey]*statVal) string {
	var lines []string
	for k, v := range gs {
		lines = append(lines, fmt.Sprintf("%s/%s/%s=%d,%d,%d", k.queue, k.user, k.state, v.jobs, v.slots, v.gpus))
	}
	slices.Sort(lines)
	return fmt.Sprint(lines)
}

// The counts kept as jobs change equal a count of every record, through
// submission, dispatch, ends, a queue switch of a whole array and the
// clean-up of finished jobs.
func TestStatsKeptInStep(t *testing.T) {
	c, _ := newTestControllerWith(t, strings.Replace(testConfig, "[cluster]\n", "[cluster]\nclean_period = \"1s\"\n", 1), 2, 0)
	check := func(when string) {
		t.Helper()
		if got, want := c.keptAndCounted(); got != want {
			t.Errorf("%s: kept %s, counted %s", when, got, want)
		}
	}
	var ids []int64
	for range 4 {
		r, err := c.Submit(alice, &api.JobSpec{Command: "true"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.JobId)
	}
	arr, err := c.Submit(alice, &api.JobSpec{Command: "true", JobName: "a", ArraySpec: "[1-5]", Hold: true, MinTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	check("after submitting")
	waitFor(t, "the jobs to end", func() bool {
		for _, id := range ids {
			if c.stateOf(id, 0) != api.JobState_DONE {
				return false
			}
		}
		return true
	})
	check("after the ends")
	reply := c.Modify(alice, &api.ModifyRequest{Ref: &api.JobRef{JobId: arr.JobId}, Spec: &api.JobSpec{Queue: "limited"}, Fields: []string{"queue"}})
	for _, r := range reply.Results {
		if r.Error != "" {
			t.Fatalf("bmod -q: %s", r.Error)
		}
	}
	check("after bmod -q")
	s := c.Stats()
	if s.Submitted != 9 || s.Done != 4 || s.Dispatched != 4 {
		t.Errorf("totals: submitted %d, done %d, dispatched %d", s.Submitted, s.Done, s.Dispatched)
	}
	for _, g := range s.Jobs {
		if g.State == api.JobState_PSUSP && (g.Queue != "limited" || g.Jobs != 5 || g.Slots != 10) {
			t.Errorf("the held array: %+v", g)
		}
	}
	waitFor(t, "the finished jobs to be cleaned", func() bool {
		return c.stateOf(ids[0], 0) == api.JobState_STATE_UNSPECIFIED
	})
	check("after the clean-up")
}
