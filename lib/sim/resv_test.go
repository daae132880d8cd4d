package sim

import (
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
