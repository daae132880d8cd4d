package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xce/lib/api"
)

// TestReservation: a replay keeps its jobs off a reservation's slots
// during its window (a job whose run limit reaches into it waits for its
// end) and lets a job that ends before it use them.
func TestReservation(t *testing.T) {
	tr := mustSWF(t, "; MaxProcs: 2\n"+
		swfLine(1, 0, 500, 1, 1000, 1, 1)+ // the unreserved slot
		swfLine(2, 0, 50, 1, 60, 1, 1)+ // ends before the window opens
		swfLine(3, 10, 50, 1, 1000, 1, 1)) // would reach into it: waits for its end
	rsv := &api.Reservation{Id: "u#0", Begin: Epoch.Unix() + 100, End: Epoch.Unix() + 200,
		Hosts: []*api.RsvHost{{Host: "h1", Slots: 1}}}
	for _, c := range []struct {
		rsvs []*api.Reservation
		want float64
	}{{nil, 50}, {[]*api.Reservation{rsv}, 200}} {
		r, err := Run(tr, Options{Hosts: 1, Slots: 2, Reservations: c.rsvs})
		if err != nil {
			t.Fatal(err)
		}
		got := starts(r)
		if got[1] != 0 || got[2] != 0 || got[3] != c.want {
			t.Errorf("reservations %d: starts %v, want job 3 at %v", len(c.rsvs), got, c.want)
		}
	}
}

// TestReservationFile: a reservations file's reservation is allocated on
// the run's hosts as brsvadd allocates (candidates in order, less what an
// earlier overlapping reservation holds) and keeps the trace's jobs off
// its slots; a bad file is refused with its name and the reason.
func TestReservationFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rsv.toml")
	os.WriteFile(path, []byte(`
[[reservation]]
name = "first"
slots = 1
hosts = ["h1"]
begin = "100s"
end = "200s"

[[reservation]]
slots = 1
hosts = ["h1", "h2"]
begin = "150s"
end = "300s"
`), 0o644)
	reqs, err := ReadReservations(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := mustSWF(t, "; MaxProcs: 2\n"+
		swfLine(1, 0, 500, 1, 1000, 1, 1)+ // h2's slot... or h1's: one of the two
		swfLine(2, 10, 50, 1, 1000, 1, 1)) // would reach into a window: waits
	r, err := Run(tr, Options{Hosts: 2, Slots: 1, RsvRequests: reqs})
	if err != nil {
		t.Fatal(err)
	}
	got := starts(r)
	// h1 is reserved 100-200, h2 150-300 (h1's slot is taken then): job 1
	// (run limit 1000 s) fits on neither now, job 2 neither; both wait for
	// the windows to end, job 1 first at 200 on h1, job 2 at 300 on h2.
	if got[1] != 200 || got[2] != 300 {
		t.Errorf("starts %v, want job 1 at 200 and job 2 at 300", got)
	}
	for _, bad := range []struct{ text, want string }{
		{"[[reservation]]\nslots = 0\nbegin = \"1h\"\nend = \"2h\"\n", "positive"},
		{"[[reservation]]\nslots = 1\nbegin = \"2h\"\nend = \"1h\"\n", "earlier"},
		{"[[reservation]]\nslots = 1\n", "begin and end"},
		{"[[reservation]]\nslots = 1\ntime_window = \"9:0-25:0\"\n", "time_window"},
		{"[[reservation]]\nslots = 1\nbegin = \"1h\"\nend = \"2h\"\ncolour = 3\n", "unknown key colour"},
	} {
		os.WriteFile(path, []byte(bad.text), 0o644)
		if _, err := ReadReservations(path); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: error %v, want one naming the file and %q", bad.text, err, bad.want)
		}
	}
	if _, err := Run(tr, Options{Hosts: 2, Slots: 1, RsvRequests: []RsvRequest{{Slots: 3, Begin: "1h", End: "2h"}}}); err == nil || !strings.Contains(err.Error(), "not enough") {
		t.Errorf("3 slots on 2: %v, want not enough slots", err)
	}
	if _, err := Run(tr, Options{Hosts: 2, Slots: 1, RsvRequests: []RsvRequest{{Slots: 1, Hosts: []string{"nohost"}, Begin: "1h", End: "2h"}}}); err == nil || !strings.Contains(err.Error(), "nohost") {
		t.Errorf("unknown host: %v", err)
	}
}

// TestReservationFileQueues: a reservation's queues (brsvadd -q) may start
// their jobs on its slots before a window whatever their run limit;
// another queue's job waits for the window's end. Unknown queues are
// refused; nosusp is read.
func TestReservationFileQueues(t *testing.T) {
	conf := mustConfig(t, `
[cluster]
name = "t"
default_queue = "q2"

[hosts.a]
slots = 1

[queues.q1]
priority = 30

[queues.q2]
priority = 30
`)
	dir := t.TempDir()
	path := filepath.Join(dir, "rsv.toml")
	tr := mustSWF(t, "; MaxProcs: 1\n"+swfLine(1, 0, 50, 1, 1000, 1, 1)) // queue q1, would reach into the window
	for _, c := range []struct {
		queues string
		want   float64
	}{{`["q2"]`, 200}, {`["q1", "q1"]`, 0}} {
		os.WriteFile(path, []byte("[[reservation]]\nslots = 1\nbegin = \"100s\"\nend = \"200s\"\nnosusp = true\nqueues = "+c.queues+"\n"), 0o644)
		reqs, err := ReadReservations(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reqs[0].NoSusp {
			t.Error("nosusp = true was not read")
		}
		r, err := Run(tr, Options{Config: conf, RsvRequests: reqs})
		if err != nil {
			t.Fatal(err)
		}
		if got := starts(r); got[1] != c.want {
			t.Errorf("queues %s: the q1 job starts at %v, want %v", c.queues, got[1], c.want)
		}
	}
	_, err := Run(tr, Options{Config: conf, RsvRequests: []RsvRequest{{Slots: 1, Begin: "1h", End: "2h", Queues: []string{"nosuch"}}}})
	if err == nil || !strings.Contains(err.Error(), "nosuch: No such queue") {
		t.Errorf("an unknown queue: %v", err)
	}
}
