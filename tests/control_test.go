package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// badmin's queue and host controls, bswitch and brequeue, against a real
// xced; queue and host controls survive a restart.
func TestControls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xce.toml")
	writeConfig(t, path, "\n[queues.night]\npriority = 10\n")
	c := newCluster(t, "--config", path)

	if out := c.must("", "badmin", "qclose", "night"); out != "Queue <night> is closed\n" {
		t.Errorf("qclose: %q", out)
	}
	if r := c.run("", "bsub", "-q", "night", "true"); r.code != 255 || !strings.Contains(r.stderr, "night: Queue has been closed. Job not submitted.") {
		t.Errorf("bsub to a closed queue: %d %q", r.code, r.stderr)
	}
	c.must("", "badmin", "qopen", "night")
	c.must("", "badmin", "qinact", "night")
	n := c.submit("", "-q", "night", "true")
	var why string
	for i := 0; i < 100 && !strings.Contains(why, "inactivated"); i++ {
		time.Sleep(20 * time.Millisecond)
		why = c.must("", "bjobs", "-p", n)
	}
	if !strings.Contains(why, "The queue is inactivated by the administrator") {
		t.Errorf("a job in an inactive queue:\n%s", why)
	}
	if out := c.must("", "bqueues", "night"); !strings.Contains(out, "Open:Inact") {
		t.Errorf("bqueues:\n%s", out)
	}

	// The controls outlive a restart.
	c.stop()
	c.start()
	if out := c.must("", "bqueues", "night"); !strings.Contains(out, "Open:Inact") {
		t.Errorf("after a restart:\n%s", out)
	}
	// bswitch moves the pending job to an active queue, where it runs.
	if out := c.must("", "bswitch", "normal", n); out != "Job <"+n+"> is switched to queue <normal>\n" {
		t.Errorf("bswitch: %q", out)
	}
	c.waitState(n, "DONE")
	if r := c.run("", "bswitch", "nosuch", n); r.code != 255 || !strings.Contains(r.stderr, "Job <"+n+">: ") {
		t.Errorf("bswitch of a finished job: %d %q", r.code, r.stderr)
	}
	c.must("", "badmin", "qact", "night")

	// hclose: nothing starts on the host; hopen lets it.
	host := hostName()
	if out := c.must("", "badmin", "hclose", host); out != "Close <"+host+"> ...... done\n" {
		t.Errorf("hclose: %q", out)
	}
	if out := c.must("", "bhosts", "-w"); !strings.Contains(out, "closed_Adm") {
		t.Errorf("bhosts -w after hclose:\n%s", out)
	}
	h := c.submit("", "true")
	time.Sleep(300 * time.Millisecond)
	if s := c.stat(h); s != "PEND" {
		t.Errorf("a job started on a closed host: %s", s)
	}
	if out := c.must("", "badmin", "hopen", host); out != "Open <"+host+"> ...... done\n" {
		t.Errorf("hopen: %q", out)
	}
	c.waitState(h, "DONE")

	// brequeue: a finished job runs again; a running one is killed and
	// runs again (it writes one line per run).
	out := filepath.Join(c.work, "runs")
	d := c.submit("", "-o", "/dev/null", "echo run >> "+out)
	c.waitState(d, "DONE")
	if got := c.must("", "brequeue", d); got != "Job <"+d+"> is being requeued\n" {
		t.Errorf("brequeue: %q", got)
	}
	c.waitState(d, "DONE")
	if b, _ := os.ReadFile(out); string(b) != "run\nrun\n" {
		t.Errorf("the requeued job ran %q", b)
	}
	r := c.submit("", "-o", "/dev/null", "echo start >> "+out+"2; sleep 30")
	c.waitState(r, "RUN")
	time.Sleep(200 * time.Millisecond)
	c.must("", "brequeue", "-r", r)
	for i := 0; i < 200; i++ {
		if b, _ := os.ReadFile(out + "2"); strings.Count(string(b), "start") == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b, _ := os.ReadFile(out + "2"); strings.Count(string(b), "start") != 2 {
		t.Errorf("the running job was not run again: %q", b)
	}
	if hist := c.must("", "bhist", "-l", r); !strings.Contains(strings.ReplaceAll(hist, "\n                     ", ""), "Requeued job is waiting for rescheduling") {
		t.Errorf("bhist -l of the requeued job:\n%s", hist)
	}
	c.must("", "bkill", r)
}

// btop and bbot as a user types them.
func TestTopBottom(t *testing.T) {
	c := newCluster(t, "--slots", "1")
	run := c.submit("", "sleep 30")
	c.waitState(run, "RUN")
	a := c.submit("", "true")
	b := c.submit("", "true")
	r := c.run("", "btop", b)
	if r.code != 0 || r.stderr != "Job <"+b+"> has been moved to position 1 from top.\n" {
		t.Errorf("btop: %d %q", r.code, r.stderr)
	}
	ids := strings.Fields(c.must("", "bjobs", "-p", "-noheader", "-o", "jobid"))
	if strings.Join(ids, " ") != b+" "+a {
		t.Errorf("pending order %v, want %s %s", ids, b, a)
	}
	if r := c.run("", "bbot", b, "3"); r.code != 0 || !strings.Contains(r.stderr, "Warning: position value <3> is beyond movable range.") {
		t.Errorf("bbot past the end: %d %q", r.code, r.stderr)
	}
	c.must("", "bkill", run, a, b)
}

// bwait returns once the condition holds, fails at once when it never
// can, and gives up at its timeout.
func TestBwait(t *testing.T) {
	c := newCluster(t)
	a := c.submit("", "sleep 1")
	start := time.Now()
	if r := c.run("", "bwait", "-w", "done("+a+")"); r.code != 0 {
		t.Errorf("bwait done: %d %q", r.code, r.stderr)
	}
	if time.Since(start) < 500*time.Millisecond || c.stat(a) != "DONE" {
		t.Errorf("bwait returned before the job was done (%s)", c.stat(a))
	}
	if r := c.run("", "bwait", "-w", "exit("+a+")"); r.code == 0 || r.stderr != "Wait condition is never satisfied\n" {
		t.Errorf("bwait on an impossible condition: %d %q", r.code, r.stderr)
	}
	if r := c.run("", "bwait", "-w", "done(424242)"); r.code == 0 || !strings.Contains(r.stderr, "424242: No matching job found") {
		t.Errorf("bwait on an unknown job: %d %q", r.code, r.stderr)
	}
}

// bmod changes a pending job's options and resets them with -Xn; a
// running job and a bad value are refused, and nothing changes then.
func TestBmod(t *testing.T) {
	c := newCluster(t)
	id := c.submit("", "-H", "-J", "before", "-W", "10", "true")
	if out := c.must("", "bmod", "-J", "after", "-W", "1:00", "-P", "proj2", id); out != "Parameters of job <"+id+"> are being changed\n" {
		t.Errorf("bmod said %q", out)
	}
	got := strings.Fields(c.must("", "bjobs", "-noheader", "-o", "job_name runtimelimit proj_name", id))
	if len(got) != 3 || got[0] != "after" || got[1] != "60.0" || got[2] != "proj2" {
		t.Errorf("after bmod: %v", got)
	}
	c.must("", "bmod", "-Wn", id)
	if got := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "runtimelimit", id)); got != "-" {
		t.Errorf("after bmod -Wn the run limit is %q", got)
	}
	if r := c.run("", "bmod", "-q", "nosuch", id); r.code != 255 || r.stderr != "nosuch: No such queue. Job not modified.\n" {
		t.Errorf("bmod -q nosuch: %d %q", r.code, r.stderr)
	}
	if q := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "queue", id)); q != "normal" {
		t.Errorf("a refused bmod changed the queue to %q", q)
	}
	run := c.submit("", "sleep 30")
	c.waitState(run, "RUN")
	if r := c.run("", "bmod", "-q", "normal", run); r.code != 255 ||
		r.stderr != "Only the following parameters can be used to modify a running job: -c, -M, -W, -o, -e, -r, -We. Job not modified.\n" {
		t.Errorf("bmod -q of a running job: %d %q", r.code, r.stderr)
	}
	// New limits reach the running job: a memory limit it is over ends it.
	c.must("", "bmod", "-W", "5", run)
	if got := strings.TrimSpace(c.must("", "bjobs", "-noheader", "-o", "runtimelimit", run)); got != "5.0" {
		t.Errorf("after bmod -W 5 of a running job the run limit is %q", got)
	}
	c.must("", "bmod", "-M", "1KB!", run) // hard: killed whatever lsf.conf says
	c.waitState(run, "EXIT")
	if l := c.must("", "bjobs", "-l", run); !strings.Contains(l, "TERM_MEMLIMIT") {
		t.Errorf("the running job was not held to its new memory limit:\n%s", l)
	}
	if hist := c.must("", "bhist", "-l", id); !strings.Contains(strings.ReplaceAll(hist, "\n                     ", ""), "Parameters of Job are changed by user or administrator") {
		t.Errorf("bhist -l:\n%s", hist)
	}
	c.must("", "bkill", id)
}
