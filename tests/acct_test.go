package tests

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// acctCluster forgets finished jobs after 2 s; the queue "short" reports
// jobs that exit within an hour as underrun.
func acctCluster(t *testing.T) *cluster {
	t.Helper()
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	text := `[cluster]
name = "acct"
default_queue = "normal"
clean_period = "2s"

[hosts.` + hostName() + `]
slots = 4

[user_groups.chem]
members = ["` + me + `"]

[queues.normal]
priority = 30

[queues.short]
priority = 30
job_underrun = "1h"

[apps.fluent]
description = "CFD solver"
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return newCluster(t, "--config", path)
}

// counts is the SUMMARY's first line for done and exited jobs.
func counts(done, exited int) string {
	return fmt.Sprintf(" Total number of done jobs:%8d      Total number of exited jobs:%6d\n", done, exited)
}

// Jobs that finished and were forgotten by bjobs (clean_period) are still
// counted by bacct, also after a restart; every filter and format of
// bacct works on them.
func TestAcctLog(t *testing.T) {
	c := acctCluster(t)
	simA := c.submit("", "-J", "simA", "-P", "p1", "true")
	simB := c.submit("", "-J", "simB", "-q", "short", "-app", "fluent", "exit 3")
	other := c.submit("", "-J", "a_rather_long_job_name_for_wide", "-G", "chem", "-g", "/proj/sub", "true")
	arr := c.submit("", "-J", "arr[1-2]", "true")
	for _, id := range []string{simA, other, arr} {
		c.waitState(id, "DONE")
	}
	c.waitState(simB, "EXIT")

	// clean_period is 2 s: bjobs forgets them.
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range []string{simA, simB, other, arr} {
		for !strings.Contains(c.run("", "bjobs", "-a", id).stderr, "Job <"+id+"> is not found") {
			if time.Now().After(deadline) {
				t.Fatalf("bjobs -a %s still shows it", id)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	check := func(when string) {
		t.Helper()
		out := c.must("", "bacct")
		if !strings.Contains(out, counts(4, 1)) {
			t.Errorf("%s: bacct:\n%s", when, out)
		}
		long := c.must("", "bacct", "-l", simA)
		for _, want := range []string{"Job <" + simA + ">, Job Name <simA>, User <", "Project <p1>", "Status <DONE>", "Command <true>", "Completed <done>.\n", counts(1, 0)} {
			if !strings.Contains(long, want) {
				t.Errorf("%s: bacct -l %s lacks %q:\n%s", when, simA, want, long)
			}
		}
	}
	check("after bjobs forgot them")
	c.stop()
	c.start()
	check("after a restart")

	// Each option selects.
	for _, tc := range []struct {
		args         []string
		done, exited int
	}{
		{[]string{"-u", "all"}, 4, 1},
		{[]string{"-d"}, 4, 0},
		{[]string{"-e"}, 0, 1},
		{[]string{"-d", "-e"}, 4, 1},
		{[]string{"-x"}, 0, 1},
		{[]string{"-app", "fluent"}, 0, 1},
		{[]string{"-q", "short normal"}, 4, 1},
		{[]string{"-q", "short"}, 0, 1},
		{[]string{"-P", "p1"}, 1, 0},
		{[]string{"-m", hostName()}, 4, 1},
		{[]string{"-J", "sim*"}, 1, 1},
		{[]string{"-J", "arr[2]"}, 1, 0},
		{[]string{"-G", "chem"}, 1, 0},
		{[]string{"-g", "/proj"}, 1, 0},
		{[]string{"-C", ".-1,"}, 4, 1},
		{[]string{"-D", ".-1,."}, 4, 1},
		{[]string{"-S", ".-1,"}, 4, 1},
		{[]string{arr}, 2, 0},
		{[]string{arr + "[1]", simB}, 1, 1},
	} {
		out := c.must("", "bacct", tc.args...)
		if !strings.Contains(out, counts(tc.done, tc.exited)) {
			t.Errorf("bacct %s: want %d done, %d exited:\n%s", strings.Join(tc.args, " "), tc.done, tc.exited, out)
		}
	}
	for _, args := range [][]string{
		{"-C", "2001/1/1,2001/12/31"},
		{"-S", ",2001/1/1"},
		{"-J", "nosuch*"},
		{"-G", "nosuch"},
		{"-g", "/nosuch"},
		{"-app", "nosuch"},
		{"-x", "-d"},
		{"-u", "nosuchuser"},
	} {
		if r := c.run("", "bacct", args...); r.code != 255 || r.stderr != "No matching job found\n" || r.stdout != "" {
			t.Errorf("bacct %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := c.run("", "bacct", "-C", "2001/13/1,"); r.code != 255 || r.stderr != "2001/13/1,: Bad time specification\n" {
		t.Errorf("bacct -C 2001/13/1,: exit %d, %q", r.code, r.stderr)
	}
	if r := c.run("", "bacct", "99999"); r.code != 255 || r.stderr != "Job <99999> is not found\nNo matching job found\n" {
		t.Errorf("bacct 99999: exit %d, %q", r.code, r.stderr)
	}

	// -x -l shows the exception.
	if out := c.must("", "bacct", "-x", "-l"); !strings.Contains(out, "\n EXCEPTION STATUS:  underrun\n") || !strings.Contains(out, "Job <"+simB+">") {
		t.Errorf("bacct -x -l:\n%s", out)
	}

	// -b: a line per job under the header; -w keeps names whole.
	brief := c.must("", "bacct", "-b")
	rows := regexp.MustCompile(`(?m)^(\d+) +(DONE|EXIT) +\S+ +(normal|short) +\w{3} [ \d]\d \d\d:\d\d +\d+\.\d\d +\d+ +\d+ +\S+ +\S+ +(.+)$`).FindAllStringSubmatch(brief, -1)
	if !strings.Contains(brief, "\nJOBID   STAT  U/UID   QUEUE      SUBMIT_TIME       CPU_T     WAIT TURNAROUND FROM        EXEC_ON     JOB_NAME\n") || len(rows) != 5 {
		t.Fatalf("bacct -b (%d rows):\n%s", len(rows), brief)
	}
	names := map[string]bool{}
	for _, r := range rows {
		names[r[4]] = true
	}
	for _, want := range []string{"simA", "simB", "*_for_wide", "arr[1]", "arr[2]"} {
		if !names[want] {
			t.Errorf("bacct -b has no job named %q: %v", want, names)
		}
	}
	if wide := c.must("", "bacct", "-b", "-w", other); !strings.Contains(wide, " a_rather_long_job_name_for_wide\n") {
		t.Errorf("bacct -b -w:\n%s", wide)
	}

	// The header states the filters.
	out := normalize(c.must("", "bacct", "-u", "all", "-e", "-x", "-app", "fluent", "-J", "sim*", "-q", "short"))
	golden(t, "bacct_header", out[:strings.Index(out, "SUMMARY")])
}
