package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// groupRunning counts the group's jobs in RUN.
func groupRunning(c *cluster, group string) int {
	out := c.run("", "bjobs", "-g", group, "-noheader", "-o", "stat")
	return strings.Count(out.stdout, "RUN")
}

// startedAt finds "Sun Dec  6 02:03:05: Started" in bjobs -l.
var startedAt = regexp.MustCompile(`(?m)^(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d)(?: \d{4})?: Started`)

// startTimes reads the jobs' start times as bjobs -l prints them.
func startTimes(t *testing.T, c *cluster, ids ...string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, id := range ids {
		l := c.must("", "bjobs", "-l", id)
		m := startedAt.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("no start time in bjobs -l %s:\n%s", id, l)
		}
		at, err := time.Parse("Mon Jan _2 15:04:05", m[1])
		if err != nil {
			t.Fatalf("job %s's start time %q: %v", id, m[1], err)
		}
		out = append(out, at)
	}
	return out
}

// A gang of 3 on 2 free slots waits whole, leaving the slots to a job
// submitted after it, says how many of its members fit, and starts whole
// (one start time) once 3 slots are free.
func TestGangWaitsAndStartsWhole(t *testing.T) {
	c := newCluster(t) // 4 slots
	c.must("", "bgadd", "-gang", "3", "/g")
	if f := strings.Fields(c.must("", "bjgroup", "-l", "/g")); len(f) != 24 || f[10] != "GANG" || f[11] != "GANG_FAIL" || f[22] != "3" || f[23] != "requeue" {
		t.Errorf("bjgroup -l: %q", f)
	}
	a := c.submit("", "sleep 60")
	b := c.submit("", "sleep 60")
	c.waitState(a, "RUN")
	c.waitState(b, "RUN")
	var m []string
	for range 3 {
		m = append(m, c.submit("", "-g", "/g", "sleep 60"))
	}
	waitFor(t, "the gang's reason", func() bool {
		return strings.Contains(c.must("", "bjobs", "-p", m[2]), "Gang group /g: 2 of 3 members can be placed now")
	})
	// What the gang's tentative placements took is free for others.
	f := c.submit("", "sleep 60")
	c.waitState(f, "RUN")
	for _, id := range m {
		if st := c.stat(id); st != "PEND" {
			t.Fatalf("gang member %s is %s with 1 slot free", id, st)
		}
	}
	c.must("", "bkill", "-r", a, f)
	for _, id := range m {
		c.waitState(id, "RUN")
	}
	ts := startTimes(t, c, m...)
	for _, at := range ts[1:] {
		if d := at.Sub(ts[0]); d > time.Second || d < -time.Second {
			t.Errorf("the gang's start times differ by %v: %v", d, ts)
		}
	}
}

// Two gangs submitted interleaved on slots for one: one starts whole,
// the other never holds part of them, and starts whole after the first
// is killed. A member whose pre-exec fails ends its gang with it when
// the group says -gang_fail kill.
func TestGangsCompeteAndFail(t *testing.T) {
	c := newCluster(t) // 4 slots
	c.must("", "bgadd", "-gang", "3", "/a")
	c.must("", "bgadd", "-gang", "3", "/b")
	var as, bs []string
	for range 3 {
		as = append(as, c.submit("", "-g", "/a", "sleep 60"))
		bs = append(bs, c.submit("", "-g", "/b", "sleep 60"))
	}
	waitFor(t, "one gang running", func() bool { return groupRunning(c, "/a")+groupRunning(c, "/b") == 3 })
	for range 10 {
		na, nb := groupRunning(c, "/a"), groupRunning(c, "/b")
		if na%3 != 0 || nb%3 != 0 || na+nb != 3 {
			t.Fatalf("gangs /a and /b run %d and %d members", na, nb)
		}
		time.Sleep(50 * time.Millisecond)
	}
	first, second := as, bs
	if groupRunning(c, "/b") == 3 {
		first, second = bs, as
	}
	if out := c.must("", "bjobs", "-p", second[0]); !strings.Contains(out, "1 of 3 members can be placed now") {
		t.Errorf("bjobs -p of the waiting gang:\n%s", out)
	}
	c.must("", "bkill", append([]string{"-r"}, first...)...)
	for _, id := range second {
		c.waitState(id, "RUN")
	}
	c.must("", "bkill", append([]string{"-r"}, second...)...)
	for _, id := range second {
		c.waitState(id, "EXIT")
	}

	c.must("", "bgadd", "-gang", "2", "-gang_fail", "kill", "/k")
	ok := c.submit("", "-g", "/k", "sleep 60")
	bad := c.submit("", "-g", "/k", "-E", "exit 1", "sleep 60")
	c.waitState(bad, "EXIT")
	c.waitState(ok, "EXIT")
	if out := c.must("", "bhist", "-l", ok); !strings.Contains(out, "Gang group /k: member <"+bad+"> failed to start") {
		t.Errorf("bhist -l of the other member:\n%s", out)
	}
}
