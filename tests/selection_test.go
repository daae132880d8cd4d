package tests

import (
	"strings"
	"testing"
	"time"
)

// bswitch and brequeue select jobs by filters as bkill does: with 0 every
// matching job, without it the latest one (bswitch) or every one
// (brequeue); LSF's messages when none matches.
func TestSwitchRequeueFilters(t *testing.T) {
	c := newCluster(t)
	a1 := c.submit("", "-H", "-J", "alpha", "true")
	a2 := c.submit("", "-H", "-J", "alpha", "true")
	c.submit("", "-H", "-J", "beta", "true")
	if out := c.must("", "bswitch", "-J", "alpha", "normal"); out != "Job <"+a2+"> is switched to queue <normal>\n" {
		t.Errorf("bswitch -J alpha (the latest): %q", out)
	}
	if out := c.must("", "bswitch", "-J", "alp*", "normal", "0"); out != "Job <"+a1+"> is switched to queue <normal>\nJob <"+a2+"> is switched to queue <normal>\n" {
		t.Errorf("bswitch -J alp* 0: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bswitch", "-J", "nosuch", "normal"}, "Job <nosuch> is not found\n"},
		{[]string{"bswitch", "-q", "nosuch", "normal", "0"}, "nosuch: No such queue\n"},
		{[]string{"bswitch", "normal"}, "Job ID must be specified.\n"},
		{[]string{"brequeue", "-J", "beta"}, "Job <beta> is not found\n"}, // pending: not requeued without -p
	} {
		if r := c.run("", tc.args[0], tc.args[1:]...); r.code != 255 || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: %d %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	g := c.submit("", "-J", "gamma", "true")
	c.waitState(g, "DONE")
	if out := c.must("", "brequeue", "-J", "gamma", "-H"); out != "Job <"+g+"> is being requeued\n" {
		t.Errorf("brequeue -J gamma: %q", out)
	}
	c.waitState(g, "PSUSP")
	if out := c.must("", "brequeue", "-u", "all", "-p", "0"); strings.Count(out, "is being requeued") != 4 {
		t.Errorf("brequeue -u all -p 0:\n%s", out)
	}
}

// bstop -a and bresume -a act on all the caller's jobs, as job ID 0.
func TestStopResumeAll(t *testing.T) {
	c := newCluster(t)
	a := c.submit("", "sleep 60")
	b := c.submit("", "sleep 60")
	c.waitState(a, "RUN")
	c.waitState(b, "RUN")
	if out := c.must("", "bstop", "-a"); strings.Count(out, "is being stopped") != 2 {
		t.Errorf("bstop -a: %q", out)
	}
	c.waitState(a, "USUSP")
	c.waitState(b, "USUSP")
	if out := c.must("", "bresume", "-a"); strings.Count(out, "is being resumed") != 2 {
		t.Errorf("bresume -a: %q", out)
	}
	c.waitState(a, "RUN")
	c.must("", "bkill", "0")
}

// bjobs -rusage: jobs reserving every named resource in one section.
func TestBjobsRusage(t *testing.T) {
	c := newCluster(t)
	a := c.submit("", "-H", "-R", "rusage[mem=10]", "true")
	b := c.submit("", "-H", "-R", "{rusage[mem=1]} || {rusage[tmp=2]}", "true")
	both := c.submit("", "-H", "-R", "rusage[mem=1,tmp=2]", "true")
	c.submit("", "-H", "true")
	for _, tc := range []struct{ names, want string }{
		{"mem", a + " " + b + " " + both},
		{"tmp", b + " " + both},
		{"mem,tmp", both},
	} {
		if got := strings.Join(strings.Fields(c.must("", "bjobs", "-noheader", "-o", "jobid", "-rusage", tc.names)), " "); got != tc.want {
			t.Errorf("bjobs -rusage %s: %s, want %s", tc.names, got, tc.want)
		}
	}
	if r := c.run("", "bjobs", "-rusage", "lic"); r.code != 0 || r.stderr != "No unfinished job found\n" {
		t.Errorf("bjobs -rusage lic: %d %q", r.code, r.stderr)
	}
	c.must("", "bkill", "0")
}

// bsub -w ... -ti: a job whose dependency can never be met ends at once
// as an orphan; bjobs -l and bhist say why.
func TestOrphanTi(t *testing.T) {
	c := newCluster(t)
	parent := c.submit("", "exit 1")
	c.waitState(parent, "EXIT")
	child := c.submit("", "-w", "done("+parent+")", "-ti", "true")
	c.waitState(child, "EXIT")
	if l := c.must("", "bjobs", "-l", child); !strings.Contains(l, "TERM_ORPHAN_SYSTEM") {
		t.Errorf("bjobs -l of an orphan:\n%s", l)
	}
	if r := c.run("", "bsub", "-ti", "true"); r.code != 255 || r.stderr != "-ti can be used only with -w. Job not submitted.\n" {
		t.Errorf("bsub -ti without -w: %d %q", r.code, r.stderr)
	}
}

// bjobs -pe / -pi: pending jobs eligible for scheduling (waiting for
// slots) and those that are not (held, waiting for a dependency).
func TestBjobsEligibility(t *testing.T) {
	c := newCluster(t) // 4 slots
	var runs []string
	for range 4 {
		runs = append(runs, c.submit("", "sleep 60"))
	}
	for _, r := range runs {
		c.waitState(r, "RUN")
	}
	waiting := c.submit("", "true")
	held := c.submit("", "-H", "true")
	dep := c.submit("", "-w", "done("+runs[0]+")", "true")
	ids := func(args ...string) string {
		var out []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			out = strings.Fields(c.run("", "bjobs", append([]string{"-noheader", "-o", "jobid"}, args...)...).stdout)
			if len(out) > 0 {
				break
			}
		}
		return strings.Join(out, " ")
	}
	// The scheduler first has to look at the jobs: poll until it has.
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = ids("-pi"); got == held+" "+dep {
			break
		}
	}
	if got != held+" "+dep {
		t.Errorf("bjobs -pi: %q, want %s %s", got, held, dep)
	}
	if got := ids("-pe"); got != waiting {
		t.Errorf("bjobs -pe: %q, want %s", got, waiting)
	}
	c.must("", "bkill", "0")
}
