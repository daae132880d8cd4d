package tests

import (
	"os/user"
	"strings"
	"testing"
	"time"
)

// A leader killed while an advance reservation is active leaves it whole
// to the next leader: its window and its job, its slot kept from other
// jobs (a job waiting before it does not take the slot the reservation's
// next job gets), and the reservation ids, which go on without reusing
// one.
func TestHALeaderCrashWithReservation(t *testing.T) {
	h := newHA(t, 3)
	h.worker("hA", 2)
	l := h.leader()
	h.waitFollowers(3)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// brsvadd -m names a host the controller knows: wait for hA.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(h.run(nil, "", "bhosts", "-w", "hA").stdout, " ok "); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("hA did not join\n%s", h.logs())
		}
	}
	iso := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	begin := time.Now().Add(3 * time.Second)
	out := h.must("brsvadd", "-n", "1", "-m", "hA", "-u", me.Username, "-b", iso(begin), "-e", iso(begin.Add(time.Hour)))
	id := me.Username + "#0"
	if strings.TrimSpace(out) != `Reservation "`+id+`" is created` {
		t.Fatalf("brsvadd: %q", out)
	}
	inRsv := h.submit("-U", id, "-o", "/dev/null", "sleep", "1000")
	plain := h.submit("-o", "/dev/null", "sleep", "1000")
	waiting := h.submit("-o", "/dev/null", "sleep", "1000")
	h.waitState(plain, "RUN")
	h.waitState(inRsv, "RUN")
	stat := func(id string) string {
		return strings.TrimSpace(h.must("bjobs", "-a", "-noheader", "-o", "stat", id))
	}
	if s := stat(waiting); s != "PEND" {
		t.Fatalf("a job outside the reservation took its slot: %s", s)
	}

	h.cands[l].crash()
	h.leader()
	out = h.must("brsvs", "-l")
	for _, want := range []string{id, "Reservation Status: Active", "RUN Jobs: " + inRsv} {
		if !strings.Contains(out, want) {
			t.Errorf("brsvs -l after the failover: no %q in\n%s", want, out)
		}
	}
	if s := stat(inRsv); s != "RUN" {
		t.Errorf("the reservation's job after the failover: %s", s)
	}
	// The reservation's slot frees; its next job takes it, not the job
	// that has waited longer.
	h.must("bkill", inRsv)
	h.waitState(inRsv, "EXIT")
	next := h.submit("-U", id, "-o", "/dev/null", "sleep", "1000")
	h.waitState(next, "RUN")
	if s := stat(waiting); s != "PEND" {
		t.Errorf("after the failover a job outside the reservation took its slot: %s", s)
	}
	out = h.must("brsvadd", "-n", "1", "-m", "hA", "-u", me.Username, "-b", iso(begin.Add(2*time.Hour)), "-e", iso(begin.Add(3*time.Hour)))
	if want := `Reservation "` + me.Username + `#1" is created`; strings.TrimSpace(out) != want {
		t.Errorf("brsvadd after the failover: %q, want %q", out, want)
	}
}
