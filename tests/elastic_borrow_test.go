package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sharedLine is bhosts -s's line of a shared resource: TOTAL (left for
// scheduling) and RESERVED.
func sharedLine(m *multi, name string) (left, reserved string) {
	for _, line := range strings.Split(m.run("", "bhosts", "-s").stdout, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == name {
			return f[1], f[2]
		}
	}
	return "", ""
}

// A shared resource with a provider: a job needing 3 tokens of a 2-token
// pool runs once the provider (local: lends at once) lent one, and the
// loan goes back after idle_time, leaving the total at 2.
func TestElasticBorrowTokens(t *testing.T) {
	m := newMulti(t, `default_queue = "normal"

[providers.lics]
kind = "local"

[resources.lic_x]
total = 2
provider = "lics"
borrow_max = 2
idle_time = "2s"

[queues.normal]
`)
	m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})
	// Long enough to be running while it is looked at, whatever the load.
	id := m.submit("sleep 60", "-R", "rusage[lic_x=3]")
	m.waitStarted(id)
	// It holds 3 of a pool the scheduler now sees as 3.
	if left, rsv := sharedLine(m, "lic_x"); rsv != "3.0" {
		t.Errorf("bhosts -s while the job runs: lic_x TOTAL %s RESERVED %s, want 3.0 reserved", left, rsv)
	}
	if view := m.must("", "badmin", "rc", "view"); !strings.Contains(view, "lic_x") || !strings.Contains(view, "granted") {
		t.Errorf("badmin rc view while the loan is out:\n%s", view)
	}
	m.must("", "bkill", id)
	m.waitState(id, "EXIT")
	var left string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if left, _ = sharedLine(m, "lic_x"); left == "2" {
			break
		}
	}
	if left != "2" {
		t.Fatalf("lic_x's total after idle_time: %s, want 2\nxced:\n%s", left, m.log)
	}
	if view := m.must("", "badmin", "rc", "view"); strings.Contains(view, "LOAN") {
		t.Errorf("a loan is left after idle_time:\n%s", view)
	}
	if n := strings.Count(m.log.String(), `msg=borrowed`); n != 1 {
		t.Errorf("%d loans; want one:\n%s", n, m.log)
	}
}

// A job waiting for units a provider has not lent says so, as one
// waiting for a template's hosts does: while the provider's
// requestTokens.sh runs, how many units and since when; once a loan
// failed, why.
func TestElasticBorrowWaitReason(t *testing.T) {
	base := t.TempDir()
	slow, bad := filepath.Join(base, "slow"), filepath.Join(base, "bad")
	stop := filepath.Join(base, "stop")
	m := newMulti(t, `default_queue = "normal"

[providers.slow]
kind = "script"
script_dir = "`+slow+`"
timeout = "60s"

[providers.bad]
kind = "script"
script_dir = "`+bad+`"

[resources.lic_s]
total = 1
provider = "slow"
borrow_max = 2

[resources.lic_b]
total = 1
provider = "bad"
borrow_max = 2

[queues.normal]
`)
	// The slow one lends nothing until the test ends.
	writeScripts(t, slow, map[string]string{
		"requestTokens.sh": "#!/bin/sh\ni=0\nwhile [ ! -e " + stop + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\necho 'not now' >&2\nexit 1\n",
		"returnTokens.sh":  "#!/bin/sh\necho '{}'\n"}, strings.NewReplacer())
	writeScripts(t, bad, map[string]string{
		"requestTokens.sh": "#!/bin/sh\necho 'no licences left on the server' >&2\nexit 3\n",
		"returnTokens.sh":  "#!/bin/sh\necho '{}'\n"}, strings.NewReplacer())
	t.Cleanup(func() { os.WriteFile(stop, nil, 0o644) })
	m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})
	slowID := m.submit("sleep 60", "-R", "rusage[lic_s=2]")
	badID := m.submit("sleep 60", "-R", "rusage[lic_b=3]")
	reason := func(id string) string { return m.run("", "bjobs", "-p", id).stdout }
	want := regexp.MustCompile(`Waiting for 1 unit of lic_s \(requested \d\d:\d\d:\d\d, provider slow\)`)
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("last bjobs -p:\n%s\nbadmin rc view:\n%s\nxced:\n%s", last, m.run("", "badmin", "rc", "view").stdout, m.log)
		}
	}()
	waitFor(t, "the slow loan's reason", func() bool { last = reason(slowID); return want.MatchString(last) })
	failed := regexp.MustCompile(`Waiting for \d units? of lic_b: its last loan failed: .*no licences left on the server \(next try at \d\d:\d\d:\d\d, provider bad\)`)
	waitFor(t, "the failed loan's reason", func() bool { last = reason(badID); return failed.MatchString(last) })
	m.must("", "bkill", slowID, badID)
}
