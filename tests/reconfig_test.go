package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func hostName() string {
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	return host
}

func writeConfig(t *testing.T, path, queues string) {
	t.Helper()
	text := "[cluster]\nname = \"e2e\"\ndefault_queue = \"normal\"\n\n[hosts." + hostName() + "]\nslots = 6\n\n[queues.normal]\npriority = 30\n" + queues
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Reconfiguration under a running workload: a queue removed, a limit
// lowered, a syntax error pushed, a SIGHUP; every job is still accounted
// for, running jobs keep running.
func TestReconfigUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	writeConfig(t, path, "\n[queues.short]\npriority = 40\nmax_slots_per_user = 2\n\n[queues.big]\npriority = 20\n")
	c := newCluster(t, "--config", path)

	bigRun := c.submit("", "-q", "big", "sleep 30")
	bigHeld := c.submit("", "-q", "big", "-H", "sleep 30")
	s1 := c.submit("", "-q", "short", "sleep 30")
	s2 := c.submit("", "-q", "short", "sleep 30")
	s3 := c.submit("", "-q", "short", "sleep 30")
	arr := c.submit("", "-J", "a[1-3]", "-H", "true")
	c.waitState(bigRun, "RUN")
	c.waitState(s1, "RUN")
	c.waitState(s2, "RUN")
	c.waitState(s3, "PEND")
	all := []string{bigRun, bigHeld, s1, s2, s3, arr}

	// The same file again changes nothing.
	if out := c.must("", "badmin", "reconfig", "-v"); strings.Contains(out, "layered again") || strings.Contains(out, "moved") {
		t.Errorf("reconfig with an unchanged file:\n%s", out)
	}

	// Queue big removed, short's per-user limit lowered.
	writeConfig(t, path, "\n[queues.short]\npriority = 40\nmax_slots_per_user = 1\n")
	out := c.must("", "badmin", "reconfig", "-v")
	if !strings.Contains(out, "No errors found.") || !strings.Contains(out, "Reconfiguration initiated") ||
		!strings.Contains(out, "Queue <big> removed") || !strings.Contains(out, "2 job(s) moved to queue <lost_and_found>") {
		t.Errorf("badmin reconfig:\n%s", out)
	}
	for _, id := range []string{bigRun, bigHeld} {
		if q := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "queue", id)); q != "lost_and_found" {
			t.Errorf("job %s of the removed queue is in %q", id, q)
		}
	}
	if s := c.stat(bigRun); s != "RUN" {
		t.Errorf("the running job of the removed queue is %s", s)
	}
	for _, id := range []string{s1, s2} {
		if s := c.stat(id); s != "RUN" {
			t.Errorf("running job %s of short is %s after the limit was lowered", id, s)
		}
	}
	c.must("", "bresume", bigHeld)
	var why string
	for i := 0; i < 100 && !strings.Contains(why, "lost_and_found"); i++ {
		time.Sleep(20 * time.Millisecond)
		why = c.must("", "bjobs", "-p", bigHeld)
	}
	if !strings.Contains(why, "queue was removed") {
		t.Errorf("the pending job in lost_and_found says:\n%s", why)
	}
	if r := c.run("", "bsub", "-q", "lost_and_found", "true"); r.code != 255 || !strings.Contains(r.stderr, "lost_and_found: No such queue") {
		t.Errorf("a submission to lost_and_found: %d %q", r.code, r.stderr)
	}
	if out := c.must("", "bqueues"); !strings.Contains(out, "lost_and_found") || strings.Contains(out, "\nbig ") {
		t.Errorf("bqueues after the reconfiguration:\n%s", out)
	}

	// A syntax error is refused whole; nothing changes.
	os.WriteFile(path, []byte("[cluster\nname = \"broken\"\n"), 0o644)
	r := c.run("", "badmin", "reconfig")
	if r.code != 255 || !strings.Contains(r.stdout, "There are fatal errors.") || !strings.Contains(r.stdout, "xce.toml:1") {
		t.Errorf("badmin reconfig of a broken file: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if out := c.must("", "bqueues"); !strings.Contains(out, "short") {
		t.Errorf("the old configuration did not stay:\n%s", out)
	}

	// SIGHUP reloads too.
	writeConfig(t, path, "\n[queues.short]\npriority = 40\nmax_slots_per_user = 1\n\n[queues.fresh]\npriority = 10\n")
	c.cmd.Process.Signal(syscall.SIGHUP)
	var qs string
	for i := 0; i < 100 && !strings.Contains(qs, "fresh"); i++ {
		time.Sleep(20 * time.Millisecond)
		qs = c.must("", "bqueues")
	}
	if !strings.Contains(qs, "fresh") {
		t.Errorf("SIGHUP did not reload:\n%s", qs)
	}

	// Every job is still there.
	seen := strings.Fields(c.must("", "bjobs", "-a", "-u", "all", "-noheader", "-o", "jobid"))
	count := map[string]int{}
	for _, id := range seen {
		count[id]++
	}
	for _, id := range all {
		want := 1
		if id == arr {
			want = 3
		}
		if count[id] != want {
			t.Errorf("job %s listed %d times after the reconfigurations, want %d", id, count[id], want)
		}
	}
}
