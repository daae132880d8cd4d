package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"xce/lib/api"
)

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"job", "job", true},
		{"job", "jobs", false},
		{"job*", "jobA", true},
		{"job*", "job", true},
		{"*job", "myjob", true},
		{"*job", "myjobs", false},
		{"*AAA*", "xAAAy", true},
		{"a*b*c", "a1b2c", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"a*b*b", "ab", false},
		{"*", "", true},
		{"**", "x/y z", true},
		{"/bin/*", "/bin/sleep 10", true},
		{"sleep?", "sleep1", false}, // only '*' is special
		{"[ab]", "a", false},
		{"[ab]", "[ab]", true},
		{"*sleep*", "/bin/sleep 10", true},
		{"x*x", "x", false},
	} {
		if got := wildcardMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestNameMatches(t *testing.T) {
	job := func(name, cmd string, idx int32) *rec {
		eff, _ := newEffSpec(&api.JobSpec{JobName: name, Command: cmd}, nil)
		return &rec{job: &api.Job{JobId: 1, ArrayIndex: idx}, eff: eff}
	}
	for _, tc := range []struct {
		pattern string
		r       *rec
		want    bool
	}{
		{"job*", job("jobA", "x", 0), true},
		{"job*", job("jobarray", "x", 1), true},
		{"*AAA*[1]", job("xAAAy", "x", 1), true},
		{"*AAA*[1]", job("xAAAy", "x", 2), false},
		{"*AAA*[1]", job("xAAAy", "x", 0), false},
		{"job1[*]", job("job1", "x", 1), false}, // no wildcard in an index
		{"sleep*", job("", "sleep 10", 0), true},
		{"sleep 10", job("", "sleep 10", 0), true},
		{"other", job("", "sleep 10", 0), false},
	} {
		if got := nameMatches(tc.pattern, tc.r); got != tc.want {
			t.Errorf("nameMatches(%q, %q[%d]) = %v, want %v", tc.pattern, tc.r.eff.GetJobName(), tc.r.job.ArrayIndex, got, tc.want)
		}
	}
}

func TestJobGroups(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"/", "/"}, {"a", "/a"}, {"/a/b/", "/a/b"}, {"//a//b", "/a/b"}, {" /a ", "/a"},
	} {
		if got := api.JobGroupPath(tc.in); got != tc.want {
			t.Errorf("JobGroupPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		jg, g     string
		subgroups bool
		want      bool
	}{
		{"/a", "/a", true, true},
		{"/a/b", "/a", true, true},
		{"/a/b/c", "/a", true, true},
		{"/ab", "/a", true, false},
		{"/a/b", "/a", false, false}, // bkill -g: the group itself only
		{"/a", "/a", false, true},
		{"/a/b", "/", true, true},
		{"", "/", true, false},
		{"/b", "/a/b", true, false},
	} {
		if got := inGroup(tc.jg, tc.g, tc.subgroups); got != tc.want {
			t.Errorf("inGroup(%q, %q, %v) = %v, want %v", tc.jg, tc.g, tc.subgroups, got, tc.want)
		}
	}
}

// jobExceptions is judged with an injected clock: no test waits.
func TestJobExceptions(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	job := func(state api.JobState, started, ended time.Duration) *api.Job {
		j := &api.Job{State: state}
		if started > 0 {
			j.StartTime = ago(started)
		}
		if ended > 0 {
			j.EndTime = ago(ended)
		}
		return j
	}
	queue := exceptionRules{overrun: 10 * time.Minute, underrun: 2 * time.Minute, idle: 0.1, idleAfter: time.Minute}
	sec := func(s int64) int64 { return s * 1000 }
	for _, tc := range []struct {
		name     string
		j        *api.Job
		cpuMs    int64
		estimate time.Duration
		rules    exceptionRules
		want     []string
	}{
		{"pending", job(api.JobState_PEND, 0, 0), 0, time.Minute, queue, nil},
		{"requeued after a run", job(api.JobState_PEND, time.Hour, 0), 0, time.Minute, queue, nil},
		{"busy, short", job(api.JobState_RUN, 5*time.Minute, 0), sec(300), 0, queue, nil},
		{"overrun", job(api.JobState_RUN, 11*time.Minute, 0), sec(660), 0, queue, []string{"overrun"}},
		{"at the threshold", job(api.JobState_RUN, 10*time.Minute, 0), sec(600), 0, queue, nil},
		{"overrun and idle", job(api.JobState_RUN, 20*time.Minute, 0), sec(60), 0, queue, []string{"overrun", "idle"}},
		{"idle", job(api.JobState_RUN, 5*time.Minute, 0), sec(10), 0, queue, []string{"idle"}},
		{"idle too early to tell", job(api.JobState_RUN, 30*time.Second, 0), 0, 0, queue, nil},
		{"suspended is not idle", job(api.JobState_USUSP, 5*time.Minute, 0), 0, 0, queue, nil},
		{"no idle rule", job(api.JobState_RUN, 5*time.Minute, 0), 0, 0, exceptionRules{}, nil},
		{"estimate exceeded", job(api.JobState_RUN, 2*time.Minute, 0), sec(120), time.Minute, queue, []string{"runtime_est_exceeded"}},
		{"estimate not reached", job(api.JobState_RUN, 2*time.Minute, 0), sec(120), 5 * time.Minute, queue, nil},
		{"estimate, suspended", job(api.JobState_SSUSP, 2*time.Minute, 0), sec(120), time.Minute, queue, []string{"runtime_est_exceeded"}},
		{"underrun", job(api.JobState_EXIT, 2*time.Minute, time.Minute+30*time.Second), 0, 0, queue, []string{"underrun"}},
		{"done early is no underrun", job(api.JobState_DONE, 2*time.Minute, time.Minute+30*time.Second), 0, 0, queue, nil},
		{"exit late is no underrun", job(api.JobState_EXIT, 10*time.Minute, time.Minute), sec(540), 0, queue, nil},
		{"killed pending is no underrun", job(api.JobState_EXIT, 0, time.Minute), 0, 0, queue, nil},
		{"finished overrun", job(api.JobState_DONE, time.Hour, 30*time.Minute), sec(1800), 0, queue, []string{"overrun"}},
		{"finished idle", job(api.JobState_DONE, 10*time.Minute, 5*time.Minute), sec(1), 0, queue, []string{"idle"}},
		{"finished over its estimate", job(api.JobState_EXIT, 4*time.Minute, time.Minute), sec(180), time.Minute, queue, []string{"runtime_est_exceeded"}},
		{"all four", job(api.JobState_EXIT, 3*time.Hour, 179*time.Minute), 0, 30 * time.Second, exceptionRules{overrun: 30 * time.Second, underrun: 2 * time.Minute, idle: 0.5}, []string{"overrun", "underrun", "idle", "runtime_est_exceeded"}},
	} {
		got := jobExceptions(tc.j, tc.cpuMs, tc.estimate, tc.rules, now)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// filterConfig has a queue that declares a job overrun after one second.
const filterConfig = testConfig + `
[queues.watched]
priority = 30
job_overrun = "1s"
job_underrun = "1h"

[host_groups.all_hosts]
members = ["all"]

[user_groups.chem]
members = ["%s"]
`

// bjobs -g takes subgroups, -G one user group, -Jd a wildcard, -x jobs with
// exceptions; bkill -g only the group itself, -stat jobs in the states, -d
// records DONE, -b skips what cannot be killed.
func TestQueryAndSignalFilters(t *testing.T) {
	aliceName, _ := lookupUser(alice.UID)
	c, fx := newTestControllerWith(t, fmt.Sprintf(filterConfig, aliceName), 2, -1)
	sub := func(spec *api.JobSpec) int64 {
		t.Helper()
		r, err := c.Submit(alice, spec)
		if err != nil {
			t.Fatal(err)
		}
		return r.JobId
	}
	a := sub(&api.JobSpec{Command: "a", JobGroup: "/proj", Description: "nightly build"})
	ab := sub(&api.JobSpec{Command: "ab", JobGroup: "/proj/sub", UserGroup: "chem", Queue: "watched"})
	other := sub(&api.JobSpec{Command: "o", JobGroup: "/project", MinTasks: 2, Description: "weekly"})
	waitFor(t, "two running", func() bool {
		return c.stateOf(a, 0) == api.JobState_RUN && c.stateOf(ab, 0) == api.JobState_RUN
	})
	ids := func(req *api.QueryRequest) []int64 {
		var out []int64
		for _, j := range c.Query(alice, req).Jobs {
			out = append(out, j.JobId)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		req  *api.QueryRequest
		want []int64
	}{
		{"-g /proj", &api.QueryRequest{JobGroup: "/proj"}, []int64{a, ab}},
		{"-g /proj/sub", &api.QueryRequest{JobGroup: "proj/sub"}, []int64{ab}},
		{"-g /", &api.QueryRequest{JobGroup: "/"}, []int64{a, ab, other}},
		{"-G chem", &api.QueryRequest{UserGroup: "chem"}, []int64{ab}},
		{"-Jd *build", &api.QueryRequest{Description: "*build"}, []int64{a}},
		{"-Jd *ly*", &api.QueryRequest{Description: "*ly*"}, []int64{a, other}},
		{"-m group", &api.QueryRequest{Host: "all_hosts"}, []int64{a, ab}},
		{"-m host", &api.QueryRequest{Host: "hostA"}, []int64{a, ab}},
		{"-m elsewhere", &api.QueryRequest{Host: "hostB"}, nil},
	} {
		if got := ids(tc.req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	waitFor(t, "an overrun", func() bool { return slices.Equal(ids(&api.QueryRequest{Exceptions: true}), []int64{ab}) })
	if j := c.Query(alice, &api.QueryRequest{Refs: []*api.JobRef{{JobId: ab, ArrayIndex: -1}}}).Jobs[0]; !slices.Equal(api.ExceptionNames(j.Exceptions), []string{"overrun"}) {
		t.Errorf("exceptions %v", j.Exceptions)
	}
	c.mu.Lock()
	shared := c.jobs[key{ab, 0}].job.Exceptions
	c.mu.Unlock()
	if shared != 0 {
		t.Errorf("the query changed the job's record: %v", shared)
	}

	// bkill -g /proj 0 leaves /proj/sub's job alone.
	rep := c.Signal(alice, &api.SignalRequest{JobGroup: "/proj", All: true, MarkDone: true})
	if len(rep.Results) != 1 || rep.Results[0].Ref.JobId != a {
		t.Fatalf("bkill -g /proj 0: %v", rep.Results)
	}
	waitFor(t, "killed as DONE", func() bool { return c.stateOf(a, 0) == api.JobState_DONE })
	// -stat pend without a job id: every pending job.
	rep = c.Signal(alice, &api.SignalRequest{States: []api.JobState{api.JobState_PEND}})
	if len(rep.Results) != 1 || rep.Results[0].Ref.JobId != other || c.stateOf(other, 0) != api.JobState_EXIT {
		t.Fatalf("bkill -stat pend: %v", rep.Results)
	}
	// A job named with a -stat it is not in is no match.
	rep = c.Signal(alice, &api.SignalRequest{States: []api.JobState{api.JobState_PEND}, Refs: []*api.JobRef{{JobId: ab, ArrayIndex: -1}}})
	if len(rep.Results) != 1 || rep.Results[0].Error != errNoJob {
		t.Fatalf("bkill -stat pend RUNNING_JOB: %v", rep.Results)
	}
	// -b 0: bob may not kill alice's job; it is skipped, not reported.
	bob := Caller{UID: 1001}
	if rep = c.Signal(bob, &api.SignalRequest{User: "all", All: true, Bulk: true}); len(rep.Results) != 0 {
		t.Errorf("bkill -b -u all 0 by another user: %v", rep.Results)
	}
	if rep = c.Signal(bob, &api.SignalRequest{User: "all", All: true}); len(rep.Results) != 1 || rep.Results[0].Error != errPermission {
		t.Errorf("bkill -u all 0 by another user: %v", rep.Results)
	}
	rep = c.Signal(alice, &api.SignalRequest{All: true, Bulk: true})
	if len(rep.Results) != 1 || rep.Results[0].Error != "" {
		t.Fatalf("bkill -b 0: %v", rep.Results)
	}
	waitFor(t, "killed", func() bool { return c.stateOf(ab, 0) == api.JobState_EXIT })
	// Killed early in a queue with job_underrun: an underrun.
	j := c.Query(alice, &api.QueryRequest{Scope: api.QueryRequest_ALL, Exceptions: true}).Jobs
	if len(j) != 1 || j[0].JobId != ab || !slices.Equal(api.ExceptionNames(j[0].Exceptions), []string{"overrun", "underrun"}) {
		t.Errorf("bjobs -x -a: %v", j)
	}
	_ = fx
}
