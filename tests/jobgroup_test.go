package tests

import (
	"strings"
	"testing"
)

// bgadd -L 1 holds a group's second job with the limit's reason, the
// group and its limit outlive a restart, bgmod -Ln lets the job start,
// and bgdel is refused while the group has unfinished jobs.
func TestJobGroupLimit(t *testing.T) {
	c := newCluster(t)
	if out := c.must("", "bgadd", "-L", "1", "/proj/sim"); out != "Job group </proj/sim> was added.\n" {
		t.Errorf("bgadd: %q", out)
	}
	if r := c.run("", "bgadd", "/proj/sim"); r.code != 255 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("bgadd again: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "bgadd", "-L", "2", "/proj/sim/sub"); r.code != 255 || !strings.Contains(r.stderr, "greater than the limit 1") {
		t.Errorf("bgadd over the parent's limit: %d %q", r.code, r.stderr)
	}
	a := c.submit("", "-g", "/proj/sim", "sleep 60")
	b := c.submit("", "-g", "/proj/sim", "sleep 60")
	c.waitState(a, "RUN")
	waitFor(t, "the job group limit's reason", func() bool {
		return strings.Contains(c.must("", "bjobs", "-p", b), "The job group has reached its job slot limit")
	})
	if out := c.must("", "bjgroup", "-s", "/proj"); !strings.Contains(out, "/proj/sim ") || !strings.Contains(out, " 1/1  ") {
		t.Errorf("bjgroup -s /proj:\n%s", out)
	}
	// The group and its limit are in the store.
	c.stop()
	c.start()
	if st := c.stat(b); st != "PEND" {
		t.Errorf("after a restart the second job is %s", st)
	}
	if r := c.run("", "bgdel", "/proj"); r.code != 255 || !strings.Contains(r.stderr, "unfinished jobs") {
		t.Errorf("bgdel with unfinished jobs: %d %q", r.code, r.stderr)
	}
	if out := c.must("", "bgmod", "-Ln", "/proj/sim"); out != "Job group /proj/sim is modified.\n" {
		t.Errorf("bgmod -Ln: %q", out)
	}
	c.waitState(b, "RUN")
	if out := c.must("", "bjgroup", "-s", "/proj/sim/"); !strings.Contains(out, " 2/-  ") {
		t.Errorf("bjgroup after -Ln:\n%s", out)
	}
	c.must("", "bkill", a, b)
	c.waitState(a, "EXIT")
	c.waitState(b, "EXIT")
	if out := c.must("", "bgdel", "/proj"); out != "Job group /proj is deleted.\n" {
		t.Errorf("bgdel: %q", out)
	}
	if r := c.run("", "bjgroup"); r.code != 0 || r.stderr != "No job group found\n" {
		t.Errorf("bjgroup after bgdel: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
