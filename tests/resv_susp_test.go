package tests

import (
	"os/user"
	"strings"
	"testing"
	"time"
)

// A reservation made over a full host: when its window opens, its job
// suspends the most recently started job on the reserved slot (SSUSP, the
// reservation named in its history) and runs; when the closed window
// ends, its job is killed and the suspended job resumes.
func TestAdvRsvSuspendsRunning(t *testing.T) {
	c, me := rsvCluster(t)
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	var plain []string
	for range 4 {
		plain = append(plain, c.submit("", "sleep", "1000"))
	}
	for _, id := range plain {
		c.waitState(id, "RUN")
	}
	begin := time.Now().Add(2 * time.Second).Truncate(time.Second)
	end := begin.Add(3 * time.Second)
	c.must("", "brsvadd", "-n", "1", "-m", "all", "-u", me, "-N", "over", "-q", "normal", "-b", iso(begin), "-e", iso(end))
	rj := c.submit("", "-U", "over", "sleep", "1000")
	c.waitStateWithin(rj, 15*time.Second, "RUN")
	last := plain[3]
	if s := c.stat(last); s != "SSUSP" {
		t.Fatalf("the most recently started job is %s when the reservation's job runs", s)
	}
	for _, id := range plain[:3] {
		if s := c.stat(id); s != "RUN" {
			t.Errorf("job %s is %s: only one slot was needed", id, s)
		}
	}
	// Its own suspending reason (LSF's SUSP_HOST_RSVACTIVE), not
	// preemption's, in bjobs -l and -s and in bhist.
	const why = "An advance reservation using the host is active"
	if out := c.must("", "bjobs", "-l", last); !strings.Contains(out, why) || strings.Contains(out, "preempted by mbatchd") {
		t.Errorf("bjobs -l of the job suspended for the reservation:\n%s", out)
	}
	if out := c.must("", "bjobs", "-s", last); !strings.Contains(out, why) {
		t.Errorf("bjobs -s of the job suspended for the reservation:\n%s", out)
	}
	// bhist -l wraps its lines at 80 columns under a 21-column margin.
	hist := c.must("", "bhist", "-l", last)
	if flat := strings.ReplaceAll(hist, "\n"+strings.Repeat(" ", 21), ""); !strings.Contains(flat, why+": job <"+rj+"> of advance reservation <over>") {
		t.Errorf("bhist -l of the suspended job names no reservation:\n%s", hist)
	}
	// brsvs -l shows -q.
	if out := c.must("", "brsvs", "-l", "over"); !strings.Contains(out, "Reservation Queues: normal") || !strings.Contains(out, "Suspend Non-AR Jobs: Yes") {
		t.Errorf("brsvs -l of a reservation made with -q normal:\n%s", out)
	}
	// The window closes: its job ends, the suspended one runs again.
	c.waitStateWithin(rj, 20*time.Second, "EXIT")
	c.waitStateWithin(last, 10*time.Second, "RUN")
}

// The end of a closed reservation's window reaches a job whose worker
// restarted in between: brsvmod -e made while the worker was away moves
// the job's end, and the job ends then (not at the old end, a minute
// later).
func TestAdvRsvEndAfterWorkerRestart(t *testing.T) {
	m := newMulti(t, `advance_reservation_min_length = "1s"`)
	w := m.worker("hA", 2) // ok (not full) while the job runs
	m.waitHosts(map[string]string{"hA": "ok"})
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	begin := time.Now().Add(time.Second).Truncate(time.Second)
	m.must("", "brsvadd", "-n", "1", "-m", "hA", "-u", me.Username, "-N", "lab", "-b", iso(begin), "-e", iso(begin.Add(time.Minute)))
	rj := m.submit("", "-U", "lab", "sleep", "1000")
	m.waitStarted(rj)
	w.crash()
	m.waitHosts(map[string]string{"hA": "unreach"})
	m.must("", "brsvmod", "-e", iso(time.Now().Add(3*time.Second)), "lab")
	m.worker("hA", 2)
	m.waitHosts(map[string]string{"hA": "ok"})
	m.waitStateWithin(rj, 20*time.Second, "EXIT")
}
