package sched

import "testing"

func inGroup(j Job, g string) Job { j.JobGroup = g; return j }

// A limit holds its group and every group below it, counting the jobs
// already started (running ones in the snapshot) and each placement of
// the cycle; a group without a limit is held by the limits above it, and
// groups elsewhere are not held.
func TestJobGroupLimitNested(t *testing.T) {
	run := mkRun(10, "alice normal 1m - a*1", "", 0)
	run.JobGroup = "/p/q"
	s := snapshot(hosts("a 8"),
		inGroup(mkJob(1, ""), "/p"),          // /p: 1 running + this = 2, its limit
		inGroup(mkJob(2, ""), "/p/r"),        // /p full
		inGroup(mkJob(3, "", "n=2"), "/x/y"), // /x/y: limit 1 counts jobs, not slots
		inGroup(mkJob(4, ""), "/x/y/z"),      // /x/y full
		inGroup(mkJob(5, ""), "/x"),          // /x: limit 3, 1 started
		mkJob(6, ""),                         // no group
		inGroup(mkJob(7, ""), "/zero"),       // limit 0: nothing runs
	)
	s.Running = append(s.Running, run)
	s.JobGroupLimits = []JobGroupLimit{{"/p", 2}, {"/p/q", 5}, {"/x/y", 1}, {"/x", 3}, {"/zero", 0}}
	check(t, s, `
1: a*1
2: PEND `+reasonJobGroup+`
3: a*2
4: PEND `+reasonJobGroup+`
5: a*1
6: a*1
7: PEND `+reasonJobGroup+`
`)
}

func TestJobGroupPathRules(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""}, {"/", ""}, {"//", ""}, {"/a", "/a"}, {"/a/", "/a"}, {"a", ""},
	} {
		if got := cleanGroup(c.in); got != c.want {
			t.Errorf("cleanGroup(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var seen []string
	ancestors("/a/b/c", func(p string) bool { seen = append(seen, p); return true })
	if len(seen) != 3 || seen[0] != "/a/b/c" || seen[2] != "/a" {
		t.Errorf("ancestors: %q", seen)
	}
}
