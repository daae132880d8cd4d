package tests

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxScreen runs xcetop in a detached tmux session of its own server and
// reads the screen as a person would see it.
type tmuxScreen struct {
	t    *testing.T
	sock string
}

func (s *tmuxScreen) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxScreen) screen() string { return s.tmux("capture-pane", "-p", "-t", "top") }

// keys sends tmux key names (Enter, Escape) or literal text.
func (s *tmuxScreen) keys(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		switch k {
		case "Enter", "Escape", "Tab", "Down", "Up":
			s.tmux("send-keys", "-t", "top", k)
		default:
			s.tmux("send-keys", "-t", "top", "-l", k)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor polls the screen until ok says yes (10 s).
func (s *tmuxScreen) waitFor(what string, ok func(string) bool) string {
	s.t.Helper()
	var scr string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if scr = s.screen(); ok(scr) {
			return scr
		}
	}
	s.t.Fatalf("the screen never showed %s; it shows:\n%s", what, scr)
	return ""
}

func (s *tmuxScreen) waitText(texts ...string) string {
	s.t.Helper()
	return s.waitFor(strings.Join(texts, " and "), func(scr string) bool {
		for _, x := range texts {
			if !strings.Contains(scr, x) {
				return false
			}
		}
		return true
	})
}

// TestXcetopInTmux runs xcetop against a real xced with running jobs,
// switches panes, filters, drills into a job, kills it with the
// confirmation, and quits.
func TestXcetopInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: this end-to-end test of xcetop needs it (apt-get install tmux)")
	}
	c := newCluster(t)
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	keeper := c.submit("", "-J", "keeper", "sleep", "600")
	victim := c.submit("", "-J", "victim", "-o", "victim.%J.out", "sh -c 'echo hello-from-victim; sleep 600'")
	c.waitState(keeper, "RUN")
	c.waitState(victim, "RUN")

	s := &tmuxScreen{t: t, sock: filepath.Join(c.dir, "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	cmd := "env XCE_DIR=" + filepath.Join(c.dir, "state") + " TERM=xterm-256color " + filepath.Join(binDir, "xcetop") +
		"; echo xcetop-exited-$?; sleep 600"
	s.tmux("new-session", "-d", "-s", "top", "-x", "120", "-y", "40", "-c", c.work, cmd)

	// The overview and the jobs pane.
	s.waitText("connected", "[3 Jobs]", "keeper", "victim", "RUN 2")

	// The hosts pane, then back to the jobs.
	s.keys("1")
	s.waitText("[1 Hosts]", "HOST_NAME", "ok")
	s.keys("3")
	s.waitText("[3 Jobs]", "JOBID")

	// Filter on the job's name: only the victim stays.
	s.keys("/", "victim", "Enter")
	scr := s.waitText("filter: victim", "1/2 jobs")
	if strings.Contains(scr, "keeper") {
		t.Fatalf("the filter left keeper on the screen:\n%s", scr)
	}

	// Drill into it: bjobs -l, and its output as it comes.
	s.keys("Enter")
	s.waitText("[job "+victim+"]", "Job <"+victim+">, Job Name <victim>", "Status <RUN>")
	s.keys("f")
	s.waitText("OUTPUT (following", "hello-from-victim")

	// Kill it, after the confirmation line.
	s.keys("K")
	s.waitText("Kill job " + victim + " (victim) of " + me + "? [y/N]")
	s.keys("y")
	s.waitText("Kill job " + victim + " (victim) of " + me + ": done")
	c.waitState(victim, "EXIT")
	c.waitState(keeper, "RUN")
	// The detail follows the job's state.
	s.waitText("Status <EXIT>")

	// Back to the list, filter cleared: the victim shows as exited.
	s.keys("Escape")
	time.Sleep(100 * time.Millisecond)
	s.keys("Escape")
	s.waitFor("keeper running and victim exited", func(scr string) bool {
		var k, v bool
		for _, l := range strings.Split(scr, "\n") {
			k = k || strings.Contains(l, "keeper") && strings.Contains(l, "▶") && strings.Contains(l, "RUN")
			v = v || strings.Contains(l, "victim") && strings.Contains(l, "✘") && strings.Contains(l, "EXIT")
		}
		return k && v
	})

	// A job no host can take: its detail names the failing term.
	picky := c.submit("", "-J", "picky", "-R", "select[mem > 99999999]", "sleep", "1")
	s.keys("/", "picky", "Enter")
	s.waitText("filter: picky", "PEND", "1/3 jobs")
	s.keys("Enter")
	s.waitText("Job <"+picky+">, Job Name <picky>", "FAILING REQUIREMENT TERMS:", "select[mem > 99999999]: no host has that much memory")
	// Pending, it can go to the top of its queue.
	s.keys("T")
	s.waitText("Move job " + picky + " (picky) of " + me + " to the top of its queue? [y/N]")
	s.keys("y")
	s.waitText("Move job " + picky + " (picky) of " + me + " to the top of its queue: done")
	s.keys("Escape")
	time.Sleep(100 * time.Millisecond)
	s.keys("Escape")
	s.waitText("3/3 jobs")

	// The controller goes away: shown; it comes back: reconnected.
	c.stop()
	s.waitText("controller lost", "(reconnecting)")
	c.start()
	s.waitText("● connected", "keeper")

	// ? shows the keys; q quits and gives the terminal back.
	s.keys("?")
	s.waitText("xcetop keys")
	s.keys("x", "q")
	scr = s.waitText("xcetop-exited-0")
	if strings.Contains(scr, "JOBID") || strings.Contains(scr, "Hosts") {
		t.Fatalf("the dashboard stayed on the screen after q:\n%s", scr)
	}
	if _, err := os.Stat(filepath.Join(c.work, "victim."+victim+".out")); err != nil {
		t.Errorf("the victim's output file: %v", err)
	}
}

// TestXcetopOnce checks xcetop --once: one plain frame for a pipe (no
// wider than asked, no cursor, no key hints, no blank lines or trailing
// blanks to fill the terminal), with -u and -q as starting filters.
func TestXcetopOnce(t *testing.T) {
	c := newCluster(t)
	a := c.submit("", "-J", "alpha", "sleep", "600")
	c.waitState(a, "RUN")
	out := c.must("", "xcetop", "--once", "--width", "80", "--height", "24")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// The overview (5), the tabs, the table's head, one job, the count.
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if l == "" || strings.HasSuffix(l, " ") || strings.HasPrefix(l, ">") || len([]rune(l)) > 80 {
			t.Errorf("line %d is not a clean line of at most 80 columns: %q", i+1, l)
		}
	}
	if strings.Contains(out, "?:keys") {
		t.Errorf("--once printed key hints:\n%s", out)
	}
	if strings.Contains(out, "\x1b") {
		t.Fatalf("--once printed escape sequences:\n%q", out)
	}
	for _, want := range []string{"connected", "[3 Jobs]", "alpha", "RUN 1", "Slots 1/4"} {
		if !strings.Contains(out, want) {
			t.Fatalf("--once lacks %q:\n%s", want, out)
		}
	}
	out = c.must("", "xcetop", "--once", "-q", "nosuchqueue", "--width", "100", "--height", "20")
	if strings.Contains(out, "alpha") || !strings.Contains(out, "filter: queue:nosuchqueue") {
		t.Fatalf("-q did not filter:\n%s", out)
	}
	out = c.must("", "xcetop", "--once", "-u", "nobody-here", "--pane", "jobs", "--width", "100", "--height", "20")
	if strings.Contains(out, "alpha") || !strings.Contains(out, "filter: user:nobody-here") {
		t.Fatalf("-u did not filter:\n%s", out)
	}
	out = c.must("", "xcetop", "--once", "--pane", "hosts", "--width", "120", "--height", "20")
	if !strings.Contains(out, "[1 Hosts]") || !strings.Contains(out, "HOST_NAME") {
		t.Fatalf("--pane hosts:\n%s", out)
	}
	if r := c.run("", "xcetop", "--pane", "nope"); r.code != 2 || !strings.Contains(r.stderr, "use hosts, queues, jobs or users") {
		t.Fatalf("a bad --pane: exit %d, %s", r.code, r.stderr)
	}
}
