package tests

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const rsvConfig = `
[cluster]
default_queue = "normal"
advance_reservation_min_length = "1s"

[queues.normal]
priority = 30

[[reservation_policies]]
name = "daytime"
users = ["all"]
time_windows = ["8:00-18:00"]
`

func rsvCluster(t *testing.T) (*cluster, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "xce.toml")
	if err := os.WriteFile(path, []byte(rsvConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return newCluster(t, "--config", path), me.Username
}

// A one-time closed reservation of 2 of the host's 4 slots: before it
// opens its job pends with LSF's reason and jobs without a run limit keep
// off the reserved slots; inside the window only its job uses them; when
// it closes its job is killed and the slots go to others. (The warning
// action before the kill is the shepherd's termination deadline warning:
// -wt counts in minutes, longer than this window.)
func TestAdvRsvOneTime(t *testing.T) {
	c, me := rsvCluster(t)
	begin := time.Now().Add(4 * time.Second)
	end := begin.Add(6 * time.Second)
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	out := c.must("", "brsvadd", "-n", "2", "-m", "all", "-u", me, "-b", iso(begin), "-e", iso(end), "-d", "course")
	id := me + "#0"
	if strings.TrimSpace(out) != `Reservation "`+id+`" is created` {
		t.Fatalf("brsvadd: %q", out)
	}
	rj := c.submit("", "-U", id, "sleep", "1000")
	var plain []string
	for range 3 {
		plain = append(plain, c.submit("", "sleep", "1000"))
	}
	waitReason(t, c, rj, "Job's reservation is inactive")
	c.waitState(plain[0], "RUN")
	c.waitState(plain[1], "RUN")
	if time.Now().Before(begin) {
		if s := c.stat(plain[2]); s != "PEND" {
			t.Fatalf("a job without a run limit took reserved slots: %s", s)
		}
	}
	c.waitStateWithin(rj, 15*time.Second, "RUN")
	if s := c.stat(plain[2]); s != "PEND" {
		t.Fatalf("a job outside the reservation runs inside its window: %s", s)
	}
	out = c.must("", "brsvs", "-l")
	for _, want := range []string{id, "Reservation Status: Active", "Reservation Type: CLOSED", "RUN Jobs: " + rj, "Description: course", "1/2"} {
		if !strings.Contains(out, want) {
			t.Errorf("brsvs -l: no %q in\n%s", want, out)
		}
	}
	// The window closes: the job is ended and the third job gets its slots.
	c.waitStateWithin(rj, 20*time.Second, "EXIT")
	c.waitStateWithin(plain[2], 10*time.Second, "RUN")
	// The controller removes expired reservations once a second.
	waitFor(t, "the expired reservation to go", func() bool {
		return strings.Contains(c.must("", "brsvs"), "No reservation found")
	})
}

// A recurring open reservation: open now, its job runs at once; it is
// kept across a restart; brsvdel removes it; bsub -U of an unknown one
// is refused.
func TestAdvRsvRecurring(t *testing.T) {
	c, me := rsvCluster(t)
	now := time.Now()
	from := now.Truncate(time.Minute)
	to := from.Add(2 * time.Minute)
	if now.Sub(from) > 50*time.Second {
		to = to.Add(time.Minute) // keep the window open long enough
	}
	win := from.Format("15:4") + "-" + to.Format("15:4")
	out := c.must("", "brsvadd", "-o", "-N", "weekly_course", "-n", "1", "-m", "all", "-u", me, "-t", win)
	if !strings.Contains(out, `Reservation "weekly_course" is created`) {
		t.Fatalf("brsvadd: %q", out)
	}
	rj := c.submit("", "-U", "weekly_course", "sleep", "1000")
	c.waitState(rj, "RUN")
	out = c.must("", "brsvs")
	if !strings.Contains(out, " *") || !strings.Contains(out, "1/1") {
		t.Errorf("brsvs:\n%s", out)
	}
	rsvModSteps(t, c, from, to)
	c.stop()
	c.start()
	out = c.must("", "brsvs", "-l", "weekly_course")
	for _, want := range []string{"Reservation Type: OPEN", "Reservation Status: Active", "RUN Jobs: " + rj, "Description: moved", "1/1"} {
		if !strings.Contains(out, want) {
			t.Errorf("brsvs -l after a restart: no %q in\n%s", want, out)
		}
	}
	if r := c.run("", "bsub", "-U", "nosuch#3", "true"); r.code == 0 || !strings.Contains(r.stderr, "nosuch#3") {
		t.Errorf("bsub -U of an unknown reservation: %d %q", r.code, r.stderr)
	}
	if out := c.must("", "brsvdel", "weekly_course"); !strings.Contains(out, "Reservation weekly_course is being deleted") {
		t.Errorf("brsvdel: %q", out)
	}
	if r := c.run("", "brsvs", "weekly_course"); r.code == 0 {
		t.Errorf("brsvs of a deleted reservation succeeded:\n%s", r.stdout)
	}
	if s := c.stat(rj); s != "RUN" {
		t.Errorf("the deleted reservation's job is %s", s)
	}
}

// rsvModSteps runs brsvmod on the active recurring weekly_course (1 slot,
// window from-to): its messages and refusals (golden), a longer window
// with the same start, and slots added and removed again.
func rsvModSteps(t *testing.T, c *cluster, from, to time.Time) {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"-d", "moved", "weekly_course"},
		{"addhost", "-n", "1", "-m", "all", "weekly_course"},
		{"rmhost", "-n", "1", "weekly_course"},
		{"rmhost", "-n", "5", "weekly_course"},
		{"-b", "+10", "weekly_course"},
		{"-o", "-on", "weekly_course"},
		{"-n", "1", "weekly_course"},
		{"-d", "x", "nosuch#1"},
		{"weekly_course"},
	} {
		r := c.run("", "brsvmod", args...)
		fmt.Fprintf(&b, "$ brsvmod %s\n%s%s[%d]\n", strings.Join(args, " "), r.stdout, r.stderr, r.code)
	}
	golden(t, "cmd_brsvmod", b.String())
	if out := c.must("", "brsvs", "-c", "all"); out != "Policy Name: daytime\nUsers: all\nHosts: all\nTime Window: 8:00-18:00\n" {
		t.Errorf("brsvs -c all:\n%s", out)
	}
	win := from.Format("15:4") + "-" + to.Add(time.Minute).Format("15:4")
	if out := c.must("", "brsvmod", "-t", win, "weekly_course"); !strings.Contains(out, "is modified") {
		t.Errorf("brsvmod -t %s: %q", win, out)
	}
}

// brsvmod -e of a closed reservation whose window is open moves its
// running job's termination deadline: later, the job outlives the old
// end; earlier, it ends at the new one.
func TestAdvRsvMoveEnd(t *testing.T) {
	c, me := rsvCluster(t)
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	begin := time.Now().Add(time.Second).Truncate(time.Second)
	end := begin.Add(4 * time.Second)
	c.must("", "brsvadd", "-n", "1", "-m", "all", "-u", me, "-N", "short", "-b", iso(begin), "-e", iso(end))
	rj := c.submit("", "-U", "short", "sleep", "1000")
	c.waitStateWithin(rj, 15*time.Second, "RUN")
	c.must("", "brsvmod", "-e", iso(time.Now().Add(time.Hour)), "short")
	// Past the old end (and the second the kill takes), the job runs on.
	time.Sleep(time.Until(end.Add(2 * time.Second)))
	if s := c.stat(rj); s != "RUN" {
		t.Fatalf("the job of a reservation whose end moved an hour later is %s at the old end", s)
	}
	c.must("", "brsvmod", "-e", iso(time.Now().Add(2*time.Second)), "short")
	c.waitStateWithin(rj, 15*time.Second, "EXIT")
}

// brsvadd -s and -unit host, brsvs -p/-z, brsvmod disable: a system
// reservation holds every slot of its host and runs no job; a whole-host
// reservation holds all the host's slots; the planner shows the host;
// disabling the next occurrence of a recurring reservation moves its
// next active period a day on.
func TestAdvRsvOptions(t *testing.T) {
	c, me := rsvCluster(t)
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	now := time.Now()
	host := shortHost(t)
	if out := c.must("", "brsvadd", "-s", "-m", "all", "-b", iso(now.Add(time.Hour)), "-e", iso(now.Add(2*time.Hour))); !strings.Contains(out, `Reservation "system#0" is created`) {
		t.Fatalf("brsvadd -s: %q", out)
	}
	if r := c.run("", "bsub", "-U", "system#0", "true"); r.code == 0 || !strings.Contains(r.stderr, "system reservation") {
		t.Errorf("bsub -U of a system reservation: %d %q", r.code, r.stderr)
	}
	if out := c.must("", "brsvadd", "-unit", "host", "-n", "1", "-m", "all", "-u", me, "-N", "whole",
		"-b", iso(now.Add(3*time.Hour)), "-e", iso(now.Add(4*time.Hour))); !strings.Contains(out, `"whole" is created`) {
		t.Fatalf("brsvadd -unit host: %q", out)
	}
	if r := c.run("", "brsvadd", "-unit", "host", "-n", "1", "-m", "all", "-u", me,
		"-b", iso(now.Add(90*time.Minute)), "-e", iso(now.Add(100*time.Minute))); r.code == 0 {
		t.Errorf("a whole host inside the system reservation's window was reserved:\n%s", r.stdout)
	}
	out := c.must("", "brsvs", "-w")
	for _, want := range []string{"system#0     sys    system", "whole", host + ":0/4"} {
		if !strings.Contains(out, want) {
			t.Errorf("brsvs -w: no %q in\n%s", want, out)
		}
	}
	out = c.must("", "brsvs", "-p", "all")
	if !strings.Contains(out, "HOST: "+host+" (MAX = 4)") || !strings.Contains(out, "Hour:Min") || strings.Count(out, "\n") < 144 {
		t.Errorf("brsvs -p all:\n%s", out)
	}
	if out := c.must("", "brsvs", "-z", host); strings.Count(out, "\n") > strings.Count(c.must("", "brsvs", "-p", host), "\n") {
		t.Errorf("brsvs -z shows more than -p:\n%s", out)
	}

	// A daily window that is not open now: disable the next occurrence.
	from := now.Add(6 * time.Hour)
	win := from.Format("15:4") + "-" + from.Add(time.Hour).Format("15:4")
	c.must("", "brsvadd", "-n", "1", "-m", "all", "-u", me, "-N", "daily", "-t", win)
	next := func() string {
		out := c.must("", "brsvs", "-l", "daily")
		_, after, _ := strings.Cut(out, "Next Active Period:\n")
		line, _, _ := strings.Cut(after, "\n")
		return strings.TrimSpace(line)
	}
	before := next()
	if out := c.must("", "brsvmod", "disable", "-tn", "-f", "daily"); !strings.Contains(out, "is modified") {
		t.Errorf("brsvmod disable -tn: %q", out)
	}
	if after := next(); after == before || after == "" {
		t.Errorf("after disable -tn the next active period is %q (before: %q)", after, before)
	}
	if r := c.run("", "brsvmod", "disable", "-tn", "-f", "whole"); r.code == 0 {
		t.Errorf("disable of a one-time reservation succeeded")
	}
}
