package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// appsConfig is an xce.toml with a queue that has limits and defaults and
// a profile with a fixed requirement, a job starter and an environment.
func appsConfig(t *testing.T) string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	text := `
[cluster]
name = "apps"
default_queue = "normal"

[hosts.` + host + `]
slots = 4

[queues.normal]
priority = 30
description = "Everyday jobs"
max_slots_per_user = 8
default_run_limit = "1h"
max_run_limit = "12h"
max_mem = "8GB"
max_tasks = 4

[queues.short]
priority = 50

[apps.fluent]
description = "CFD solver"
res_req = "select[mem>0] span[hosts=1]"
fixed = ["res_req"]
run_limit = "2h"
job_starter = "env STARTED=yes %USRCMD"
pre_exec = "true"
env = { SOLVER_HOME = "/opt/solver" }
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bqueues -l shows a queue's configured limits; bapp and bapp -l show the
// profiles; bjobs -l of a job submitted with -app shows where each
// effective value came from.
func TestApps(t *testing.T) {
	c := newCluster(t, "--config", appsConfig(t))

	out := c.must("", "bqueues", "-l", "normal")
	for _, want := range []string{
		"QUEUE: normal\n  -- Everyday jobs  This is the default queue.\n",
		"\nPARAMETERS/STATISTICS\nPRIO NICE STATUS ",
		"\nDEFAULT LIMITS:\n RUNLIMIT\n 60.0 min\n",
		"\nMAXIMUM LIMITS:\n RUNLIMIT\n 720.0 min\n\n MEMLIMIT\n      8 G\n\n TASKLIMIT\n 4\n",
		"\nUSERS: all\nHOSTS:  all\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bqueues -l normal: no %q in\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`\n 30    0  Open:Active       -    8    -    -     0 `).MatchString(out) {
		t.Errorf("bqueues -l normal statistics:\n%s", out)
	}
	if out := c.must("", "bqueues", "-l"); strings.Count(out, "QUEUE: ") != 2 || !strings.Contains(out, "\n"+strings.Repeat("-", 79)+"\n") {
		t.Errorf("bqueues -l:\n%s", out)
	}

	if out := c.must("", "bqueues", "-w"); !regexp.MustCompile(`^QUEUE_NAME +PRIO STATUS .*\nshort +50  Open:Active .*\nnormal +30  Open:Active `).MatchString(out) {
		t.Errorf("bqueues -w:\n%s", out)
	}

	if out := c.must("", "bapp"); !regexp.MustCompile(`^APPLICATION_NAME +NJOBS  PEND   RUN  SUSP\nfluent +0 +0 +0 +0\n$`).MatchString(out) {
		t.Errorf("bapp:\n%s", out)
	}
	r := c.run("", "bapp", "nosuch")
	if r.code != 255 || r.stderr != "nosuch: No such application profile\n" {
		t.Errorf("bapp nosuch: %d %q", r.code, r.stderr)
	}

	id := c.submit("", "-app", "fluent", "-R", "select[mem>1]", "sleep 30")
	c.waitState(id, "RUN")
	out = c.must("", "bapp", "-l", "fluent")
	for _, want := range []string{
		"APPLICATION NAME: fluent\n  -- CFD solver\n",
		"STATISTICS:\n   NJOBS     PEND      RUN    SSUSP    USUSP      RSV\n       1        0        1        0        0        0\n",
		"PARAMETERS:\n\n RUNLIMIT\n 120.0 min\n",
		"\nRES_REQ: select[mem>0] span[hosts=1]\nFIXED: res_req\nPRE_EXEC: true\n",
		"\nJOB_STARTER: env STARTED=yes %USRCMD\nENV_VARS: SOLVER_HOME=/opt/solver\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bapp -l fluent: no %q in\n%s", want, out)
		}
	}

	out = c.must("", "bjobs", "-l", id)
	_, settings, ok := strings.Cut(out, "\n EFFECTIVE SETTINGS:\n")
	if !ok {
		t.Fatalf("bjobs -l: no EFFECTIVE SETTINGS\n%s", out)
	}
	for _, re := range []string{
		`(?m)^ queue +normal +default$`,
		`(?m)^ application +fluent +job$`,
		`(?m)^ run limit +120\.0 min +profile fluent$`,
		`(?m)^ mem limit +8 G +queue normal$`,
		`(?m)^ res_req +\S.*\n(?: {16}\S.*\n)? +job \+ profile fluent$`,
		`(?m)^ pre-exec +true +profile fluent$`,
		`(?m)^ job starter +env STARTED=yes %USRCMD +profile fluent$`,
		`(?m)^ env +SOLVER_HOME=/opt/solver +profile fluent$`,
	} {
		if !regexp.MustCompile(re).MatchString(settings) {
			t.Errorf("bjobs -l EFFECTIVE SETTINGS: no match for %s in\n%s", re, settings)
		}
	}
	if !strings.Contains(out, "\n 120.0 min") {
		t.Errorf("bjobs -l RUNLIMIT:\n%s", out)
	}
	c.must("", "bkill", id)
}

// Without profiles bapp says so.
func TestAppsNoneConfigured(t *testing.T) {
	c := newCluster(t)
	r := c.run("", "bapp")
	if r.code != 255 || r.stderr != "No application profiles found.\n" || r.stdout != "" {
		t.Errorf("bapp without profiles: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
