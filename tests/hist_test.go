package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// bhist's selections: state options, time windows (-S, -C, -D), and the
// filters (-P, -Jd, -g, -m), against a real xced.
func TestBhistSelections(t *testing.T) {
	c := newCluster(t)
	// One after the other: finished jobs are listed by when they ended,
	// and two jobs running at once may end in either order.
	done := c.submit("", "-J", "ok", "-P", "physics", "-Jd", "nightly run", "-g", "/proj/a", "true")
	c.waitState(done, "DONE")
	exited := c.submit("", "-J", "bad", "exit 3")
	c.waitState(exited, "EXIT")
	held := c.submit("", "-J", "held", "-H", "true")
	// The job IDs bhist lists, in its order.
	ids := func(args ...string) string {
		t.Helper()
		r := c.run("", "bhist", args...)
		if r.code != 0 {
			return "exit " + r.stderr
		}
		var out []string
		for _, l := range strings.Split(r.stdout, "\n")[2:] {
			if f := strings.Fields(l); len(f) > 0 {
				out = append(out, f[0])
			}
		}
		return strings.Join(out, " ")
	}
	today := time.Now().Format("2006/1/2")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, held},
		{[]string{"-a"}, strings.Join([]string{held, done, exited}, " ")},
		{[]string{"-d"}, done + " " + exited},
		{[]string{"-e"}, exited},
		{[]string{"-p", "-e"}, held + " " + exited},
		{[]string{"-C", today}, done + " " + exited},
		{[]string{"-C", ","}, done + " " + exited},
		{[]string{"-C", "2020/1/1,2020/12/31"}, "exit No matching job found\n"},
		{[]string{"-a", "-S", today + ","}, strings.Join([]string{held, done, exited}, " ")},
		{[]string{"-a", "-S", ",2020/1/1"}, "exit No matching job found\n"},
		{[]string{"-a", "-D", ".-1,"}, done + " " + exited},
		{[]string{"-a", "-P", "physics"}, done},
		{[]string{"-a", "-Jd", "nightly*"}, done},
		{[]string{"-a", "-g", "/proj"}, done},
		{[]string{"-a", "-J", "bad"}, exited},
		{[]string{"-a", "-u", "all", "-m", "nosuchhost"}, "exit No matching job found\n"},
		{[]string{held, done}, held + " " + done},
	} {
		if got := ids(tc.args...); got != tc.want {
			t.Errorf("bhist %s: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	host, _ := os.Hostname()
	host = strings.SplitN(host, ".", 2)[0]
	if got := ids("-a", "-m", host); got != done+" "+exited {
		t.Errorf("bhist -a -m %s: %q", host, got)
	}
	// -w does not cut the job name; -b is -l's layout in short.
	if out := c.must("", "bhist", "-w", "-a", "-J", "ok"); !regexp.MustCompile(`(?m)^` + done + `\s+\S+\s+ok\s`).MatchString(out) {
		t.Errorf("bhist -w:\n%s", out)
	}
	brief := strings.ReplaceAll(c.must("", "bhist", "-b", done), "\n                     ", "")
	for _, want := range []string{"Job <" + done + ">, Job Name <ok>", ": Submitted from host <", "Dispatched to <", "Done successfully.",
		"Summary of time in seconds spent in various states by"} {
		if !strings.Contains(brief, want) {
			t.Errorf("bhist -b lacks %q:\n%s", want, brief)
		}
	}
	if strings.Contains(brief, "Running with execution home") {
		t.Errorf("bhist -b is not brief:\n%s", brief)
	}
}

// badmin showstatus summarizes the hosts, the jobs and the controller.
func TestShowStatus(t *testing.T) {
	c := newCluster(t)
	run := c.submit("", "sleep 1000")
	t.Cleanup(func() { killJobs(c, run) })
	c.submit("", "-H", "true")
	fin := c.submit("", "true")
	c.waitState(run, "RUN")
	c.waitState(fin, "DONE")
	out := c.must("", "badmin", "showstatus")
	// What differs between machines and runs: CPUs, the start, the pid.
	out = regexp.MustCompile(`(?m)^( +(CPUs|Cores): +)\d+/\d+$`).ReplaceAllString(out, "${1}N/N")
	out = regexp.MustCompile(`(?m)^( +Latest mbatchd start: +).*$`).ReplaceAllString(out, "${1}DATE")
	out = regexp.MustCompile(`(?m)^( +Active mbatchd PID: +)\d+$`).ReplaceAllString(out, "${1}PID")
	golden(t, "showstatus", out)
}
