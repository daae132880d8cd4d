package tests

import (
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const limitsConfig = `
[cluster]
default_queue = "normal"

[queues.normal]
priority = 30

[queues.short]
priority = 50

[user_groups.chem]
members = ["xce-test-nobody"]

[users.default]
max_slots = 100

[[limits]]
name = "user_jobs"
per_user = ["all"]
queues = ["normal"]
jobs = 2

[[limits]]
name = "short_slots"
queues = ["short"]
slots = 1
mem = "1GB"

[[limits]]
name = "chem_mem"
users = ["chem"]
mem = "10GB"
`

// [[limits]]: jobs past a limit pend with LSF's reason and start when
// others end; blimits shows what each limit holds, blimits -c the
// configuration.
func TestLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(limitsConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, "--config", path)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}

	var n []string
	for range 3 {
		n = append(n, c.submit("", "sleep", "1000"))
	}
	s1 := c.submit("", "-q", "short", "sleep", "1000")
	s2 := c.submit("", "-q", "short", "sleep", "1000")
	c.waitState(n[0], "RUN")
	c.waitState(n[1], "RUN")
	c.waitState(s1, "RUN")
	waitReason(t, c, n[2], "JOBS limit defined for the user or user group has been reached")
	waitReason(t, c, s2, "Resource (slot) limit defined on queue has been reached")
	if s := c.stat(n[2]); s != "PEND" {
		t.Fatalf("job %s past the JOBS limit is %s", n[2], s)
	}

	out := c.must("", "blimits")
	golden(t, "blimits", regexp.MustCompile(`\b`+regexp.QuoteMeta(me.Username)+`\b`).ReplaceAllString(out, "USER"))
	if out := c.must("", "blimits", "-q", "short"); strings.Contains(out, "user_jobs") || !strings.Contains(out, "short_slots") {
		t.Errorf("blimits -q short:\n%s", out)
	}
	golden(t, "blimits_c", c.must("", "blimits", "-c"))

	// busers all lists the users and groups with limits, with or without
	// jobs.
	users := c.must("", "busers", "all")
	for _, want := range []string{"\nchem ", "\ndefault ", "\n" + me.Username + " "} {
		if !strings.Contains(users, want) {
			t.Errorf("busers all: no %q in\n%s", want, users)
		}
	}

	// When a job ends, the next one gets its place.
	c.must("", "bkill", n[0])
	c.waitState(n[2], "RUN")
	c.must("", "bkill", s1)
	c.waitState(s2, "RUN")
}

// waitReason waits until bjobs -p shows the reason for job id.
func waitReason(t *testing.T, c *cluster, id, reason string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = c.must("", "bjobs", "-p", id)
		if strings.Contains(out, "\n "+reason+";") || strings.Contains(out, "\n"+reason+";") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s: no %q in bjobs -p:\n%s", id, reason, out)
}
