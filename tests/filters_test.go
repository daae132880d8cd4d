package tests

import (
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// filtersConfig is an xce.toml for this host with a host group, a profile
// and queues whose job exception thresholds trip within a second.
func filtersConfig(t *testing.T) string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	text := `
[cluster]
name = "filters"
default_queue = "normal"
eadmin_trigger_duration = "1s"

[hosts.` + host + `]
slots = 8

[host_groups.everything]
members = ["all"]

[queues.normal]
priority = 30

[queues.watched]
priority = 30
job_overrun = "1s"
job_underrun = "1h"

[queues.idleq]
priority = 30
job_idle = 0.5

[apps.prof]
description = "a profile to filter on"

[user_groups.chem]
members = ["` + me + `"]
`
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ids runs bjobs -noheader -o jobid with args and returns the job IDs.
func (c *cluster) ids(args ...string) []string {
	c.t.Helper()
	r := c.run("", "bjobs", append([]string{"-noheader", "-o", "jobid"}, args...)...)
	if r.code != 0 {
		c.t.Fatalf("bjobs %v: exit %d: %s", args, r.code, r.stderr)
	}
	out := strings.Fields(r.stdout)
	slices.Sort(out)
	return out
}

// poll runs bjobs with args until its standard output matches re.
func (c *cluster) poll(re *regexp.Regexp, args ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = c.run("", "bjobs", args...).stdout
		if re.MatchString(out) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("bjobs %v never matched %s:\n%s", args, re, out)
	return ""
}

// bjobs -g (with subgroups), -G, -Jd, -J with wildcards and -m with a host
// group select among the jobs; the messages for nothing found are LSF's.
func TestFiltersBjobs(t *testing.T) {
	c := newCluster(t, "--config", filtersConfig(t))
	a := c.submit("", "-g", "/proj", "-Jd", "nightly build", "sleep 60")
	b := c.submit("", "-g", "/proj/sub", "-G", "chem", "sleep 60")
	o := c.submit("", "-g", "/project", "-J", "other", "-Jd", "weekly", "sleep 60")
	c.waitState(o, "RUN")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-g", "/proj"}, []string{a, b}},
		{[]string{"-g", "/proj/sub"}, []string{b}},
		{[]string{"-g", "proj/sub/"}, []string{b}},
		{[]string{"-g", "/"}, []string{a, b, o}},
		{[]string{"-G", "chem"}, []string{b}},
		{[]string{"-Jd", "*build"}, []string{a}},
		{[]string{"-Jd", "*ly*"}, []string{a, o}},
		{[]string{"-J", "*th*"}, []string{o}},
		{[]string{"-J", "sl*p 6*"}, []string{a, b}},
		{[]string{"-m", "everything"}, []string{a, b, o}},
		{[]string{"-g", "/proj", "-J", "sleep*"}, []string{a, b}},
	} {
		if got := c.ids(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("bjobs %v: %v, want %v", tc.args, got, tc.want)
		}
	}
	if out := c.must("", "bjobs", "-l", b); !strings.Contains(strings.Join(strings.Fields(out), ""), "JobGroup</proj/sub>") {
		t.Errorf("bjobs -l shows no job group:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-g", "/nothing"}, "No unfinished job found\n"},
		{[]string{"-G", "physics"}, "No unfinished job found\n"},
		{[]string{"-p", "-Jd", "weekly"}, "No pending job found\n"},
		{[]string{"-q", "watched", "-g", "/proj"}, "No unfinished job found in queue <watched>\n"},
		{[]string{"-J", "nomatch*"}, "Job <nomatch*> is not found\n"},
		{[]string{"-x"}, "No unfinished job found\n"},
	} {
		if r := c.run("", "bjobs", tc.args...); r.code != 0 || r.stdout != "" || r.stderr != tc.want {
			t.Errorf("bjobs %v: exit %d, %q %q, want %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	c.must("", "bkill", "0")
}

// bjobs -x: a job running past its queue's job_overrun, an idle job and a
// job that exits within job_underrun; -l shows EXCEPTION STATUS and the
// idle factor. The thresholds are a second: the test waits for the state,
// never for a length of time.
func TestFiltersExceptions(t *testing.T) {
	c := newCluster(t, "--config", filtersConfig(t))
	over := c.submit("", "-q", "watched", "sleep 60")
	idle := c.submit("", "-q", "idleq", "sleep 60")
	plain := c.submit("", "sleep 60")
	under := c.submit("", "-q", "watched", "exit 3")
	c.waitState(under, "EXIT")
	c.waitState(plain, "RUN")
	out := c.poll(regexp.MustCompile(`(?m)^`+over+` +overrun\n`+idle+` +idle\n$`), "-x", "-noheader", "-o", "jobid exception_status")
	if strings.Contains(out, plain+" ") || strings.Contains(out, under+" ") {
		t.Errorf("bjobs -x:\n%s", out)
	}
	all := c.must("", "bjobs", "-x", "-a", "-noheader", "-o", "jobid stat exception_status")
	if !regexp.MustCompile(`(?m)^`+under+` +EXIT +underrun$`).MatchString(all) || strings.Contains(all, plain+" ") {
		t.Errorf("bjobs -x -a:\n%s", all)
	}
	if js := c.must("", "bjobs", "-o", "jobid exception_status", "-json", over, plain); !strings.Contains(js, `"EXCEPTION_STATUS":"overrun"`) || !strings.Contains(js, `"EXCEPTION_STATUS":""`) {
		t.Errorf("bjobs -json:\n%s", js)
	}
	// The golden: each job's header and its EXCEPTION STATUS line, and the
	// idle job's idle factor (bjobs -UF: one line per item).
	var kept []string
	for _, line := range strings.Split(c.must("", "bjobs", "-UF", "-x", "-a"), "\n") {
		switch {
		case strings.HasPrefix(line, "Job <"), strings.HasPrefix(line, " EXCEPTION STATUS:"):
			kept = append(kept, line)
		case strings.Contains(line, "IDLE_FACTOR"):
			// The figure itself is the host's: a job that sleeps still
			// spends a few milliseconds starting, which its cgroup counts
			// exactly (the "idle" status above says it is under the
			// queue's job_idle).
			f := regexp.MustCompile(`IDLE_FACTOR\(cputime/runtime\): +\d+\.\d\d;`).FindString(line)
			kept = append(kept, regexp.MustCompile(`\d+\.\d\d`).ReplaceAllString(f, "F.FF"))
		}
	}
	golden(t, "bjobs_exceptions", normalize(strings.Join(kept, "\n")+"\n"))
	c.must("", "bkill", "0")
}

// bjobs -psum sums up why the pending jobs pend; with none pending it says
// so in the summary.
func TestFiltersPendSummary(t *testing.T) {
	c := newCluster(t, "--config", filtersConfig(t))
	mask := regexp.MustCompile(`published .*`)
	empty := mask.ReplaceAllString(c.must("", "bjobs", "-psum"), "published DATE")
	if empty != "Pending reason summary: published DATE\nSummarizing 0 pending jobs in cluster (filters):\n" {
		t.Errorf("bjobs -psum with nothing pending:\n%q", empty)
	}
	c.submit("", "-H", "sleep 1")
	c.submit("", "-H", "-g", "/held", "sleep 1")
	out := c.must("", "bsub", "-b", time.Now().Add(2*time.Hour).Format("15:04"), "true")
	later := submittedRE.FindStringSubmatch(strings.SplitN(out, "\n", 2)[0] + "\n")[1]
	c.poll(regexp.MustCompile(`specified start time`), "-p", later)
	golden(t, "bjobs_psum", mask.ReplaceAllString(c.must("", "bjobs", "-psum"), "published DATE"))
	golden(t, "bjobs_psum_group", mask.ReplaceAllString(c.must("", "bjobs", "-psum", "-g", "/held"), "published DATE"))
	// -pl: the pending jobs in the long format.
	// (Compared without blanks: where -l folds a line depends on the user
	// name's length.)
	pl := strings.Join(strings.Fields(c.must("", "bjobs", "-pl")), "")
	if strings.Count(pl, "PENDINGREASONS:") != 3 || !strings.Contains(pl, "JobGroup</held>") || !strings.Contains(pl, "Thejobhasaspecifiedstarttime;") {
		t.Errorf("bjobs -pl:\n%s", pl)
	}
	c.must("", "bkill", "0")
}

// bstop and bresume with -app and -g, and bkill's -m, -app, -g, -stat, -d
// and -b, with LSF's messages.
func TestFiltersControl(t *testing.T) {
	c := newCluster(t, "--config", filtersConfig(t))
	plain := c.submit("", "sleep 60")
	prof := c.submit("", "-app", "prof", "sleep 60")
	sub := c.submit("", "-g", "/grp/a", "sleep 60")
	grp := c.submit("", "-g", "/grp", "sleep 60")
	held := c.submit("", "-H", "sleep 60")
	c.waitState(grp, "RUN")
	c.waitState(held, "PSUSP")

	expect := func(want string, code int, name string, args ...string) {
		t.Helper()
		r := c.run("", name, args...)
		if r.code != code || r.stdout+r.stderr != want {
			t.Errorf("%s %v: exit %d, %q %q, want %d %q", name, args, r.code, r.stdout, r.stderr, code, want)
		}
	}
	expect("Job <"+prof+"> is being stopped\n", 0, "bstop", "-app", "prof", "0")
	c.waitState(prof, "USUSP")
	expect("Job <"+prof+"> is being resumed\n", 0, "bresume", "-app", "prof")
	c.waitState(prof, "RUN")
	// -g takes the group itself, not /grp/a.
	expect("Job <"+grp+"> is being stopped\n", 0, "bstop", "-g", "/grp", "0")
	c.waitState(grp, "USUSP")
	if s := c.stat(sub); s != "RUN" {
		t.Errorf("bstop -g /grp stopped the subgroup's job: %s", s)
	}
	expect("Job <"+grp+"> is being resumed\n", 0, "bresume", "-g", "/grp/", "0")
	c.waitState(grp, "RUN")

	// -stat without a job ID: every job in that state.
	expect("Job <"+held+"> is being terminated\n", 0, "bkill", "-stat", "susp")
	c.waitState(held, "EXIT")
	expect("Job <"+plain+">: No matching job found\n", 255, "bkill", "-stat", "pend", plain)
	// A filter without a job ID: the last submitted matching job.
	expect("Job <"+sub+"> is being terminated\n", 0, "bkill", "-g", "/grp/a")
	c.waitState(sub, "EXIT")
	expect("Job <"+prof+"> is being terminated\n", 0, "bkill", "-m", "everything", "-app", "prof", "0")
	c.waitState(prof, "EXIT")
	expect("nosuchhost: Bad host name, host group name or cluster name\n", 255, "bkill", "-m", "nosuchhost", "0")
	// -d: killed, recorded DONE.
	expect("Job <"+grp+"> is being terminated\n", 0, "bkill", "-d", grp)
	c.waitState(grp, "DONE")
	if out := c.must("", "bjobs", "-noheader", "-o", "stat exit_code exit_reason", grp); strings.Fields(out)[0] != "DONE" || strings.Contains(out, "TERM_") {
		t.Errorf("bkill -d: %q", out)
	}
	// -b: a plain kill, one line per job.
	expect("Job <"+plain+"> is being terminated\n", 0, "bkill", "-b", "0")
	c.waitState(plain, "EXIT")
	expect("No unfinished job found\n", 255, "bkill", "-b", "0")
}
