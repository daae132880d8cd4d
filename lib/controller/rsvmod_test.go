package controller

import (
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// brsvmod: each change and each refusal, on a one-time reservation of a
// 4-slot host beside another reservation.
func TestRsvModify(t *testing.T) {
	c, _ := newTestController(t, 4, 0)
	root := Caller{}
	begin := time.Now().Add(time.Hour).Truncate(time.Minute)
	add := func(slots int32, b, e time.Time) string {
		t.Helper()
		rep := c.Reservations(root, &api.ReservationRequest{Op: api.ReservationRequest_ADD, Slots: slots,
			Rsv: &api.Reservation{Users: []string{"alice"}, Begin: b.Unix(), End: e.Unix(), Hosts: []*api.RsvHost{{Host: "hostA"}}}})
		if len(rep.Errors) > 0 {
			t.Fatalf("brsvadd: %v", rep.Errors)
		}
		return rep.Reservations[0].Id
	}
	id := add(2, begin, begin.Add(time.Hour))
	other := add(1, begin.Add(2*time.Hour), begin.Add(3*time.Hour))
	mod := func(req *api.ReservationRequest) (*api.Reservation, string) {
		t.Helper()
		req.Op, req.Ids = api.ReservationRequest_MODIFY, []string{id}
		rep := c.Reservations(root, req)
		if len(rep.Errors) > 0 {
			return nil, rep.Errors[0]
		}
		if len(rep.Messages) != 1 || rep.Messages[0] != `Reservation "`+id+`" is modified` {
			t.Errorf("messages %v", rep.Messages)
		}
		return rep.Reservations[0], ""
	}
	slots := func(r *api.Reservation) int32 {
		n := int32(0)
		for _, h := range r.Hosts {
			n += h.Slots
		}
		return n
	}
	// Users, type, description.
	r, err := mod(&api.ReservationRequest{Fields: []string{"users", "open", "description"},
		Rsv: &api.Reservation{Users: []string{"bob", "carol"}, Open: true, Description: "moved"}})
	if err != "" || r.Type != "group" || !r.Open || r.Description != "moved" || len(r.Users) != 2 {
		t.Fatalf("users/open/description: %v %v", r, err)
	}
	if r, err = mod(&api.ReservationRequest{Fields: []string{"rmuser"}, Rsv: &api.Reservation{Users: []string{"carol"}}}); err != "" || r.Type != "user" {
		t.Fatalf("rmuser: %v %v", r, err)
	}
	// addhost: -n more; without -n every free slot.
	if r, err = mod(&api.ReservationRequest{HostOp: api.ReservationRequest_ADDHOST, Slots: 1, Rsv: &api.Reservation{Hosts: []*api.RsvHost{{Host: "hostA"}}}}); err != "" || slots(r) != 3 {
		t.Fatalf("addhost -n 1: %v %v", r, err)
	}
	if r, err = mod(&api.ReservationRequest{HostOp: api.ReservationRequest_ADDHOST, Rsv: &api.Reservation{Hosts: []*api.RsvHost{{Host: "hostA"}}}}); err != "" || slots(r) != 4 {
		t.Fatalf("addhost all: %v %v", r, err)
	}
	// The longer window would overlap the other reservation's slot.
	if _, err = mod(&api.ReservationRequest{Fields: []string{"end"}, Rsv: &api.Reservation{End: begin.Add(150 * time.Minute).Unix()}}); !strings.Contains(err, "Not enough hosts or job slots") {
		t.Fatalf("an overlapping end: %q", err)
	}
	if r, err = mod(&api.ReservationRequest{HostOp: api.ReservationRequest_RMHOST, Slots: 1}); err != "" || slots(r) != 3 {
		t.Fatalf("rmhost -n 1: %v %v", r, err)
	}
	if r, err = mod(&api.ReservationRequest{Fields: []string{"end"}, Rsv: &api.Reservation{End: begin.Add(150 * time.Minute).Unix()}}); err != "" || r.End != begin.Add(150*time.Minute).Unix() {
		t.Fatalf("-e: %v %v", r, err)
	}
	for _, c := range []struct {
		req  *api.ReservationRequest
		want string
	}{
		{&api.ReservationRequest{HostOp: api.ReservationRequest_RMHOST, Rsv: &api.Reservation{Hosts: []*api.RsvHost{{Host: "hostA"}}}}, "Cannot remove all hosts"},
		{&api.ReservationRequest{HostOp: api.ReservationRequest_ADDHOST, Slots: 1, Rsv: &api.Reservation{Hosts: []*api.RsvHost{{Host: "hostA"}}}}, "Not enough hosts or job slots"},
		{&api.ReservationRequest{HostOp: api.ReservationRequest_RMHOST, Rsv: &api.Reservation{Hosts: []*api.RsvHost{{Host: "nosuch"}}}}, "Host is not in the advance reservation"},
		{&api.ReservationRequest{Fields: []string{"begin"}, Rsv: &api.Reservation{Begin: begin.Add(3 * time.Hour).Unix()}}, "The begin time must be earlier than the end time"},
		{&api.ReservationRequest{Fields: []string{"time_window"}, Rsv: &api.Reservation{TimeWindow: "8:00-9:00"}}, "-t applies to a recurring reservation"},
		{&api.ReservationRequest{Fields: []string{"rmuser"}, Rsv: &api.Reservation{Users: []string{"bob"}}}, "Cannot remove all users"},
	} {
		if _, err := mod(c.req); !strings.Contains(err, c.want) {
			t.Errorf("%v: %q, want %q", c.req, err, c.want)
		}
	}
	// A user may change only the reservations they created; an unknown
	// one is reported.
	rep := c.Reservations(Caller{UID: 4242}, &api.ReservationRequest{Op: api.ReservationRequest_MODIFY, Ids: []string{other}, Fields: []string{"open"}, Rsv: &api.Reservation{Open: true}})
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], other) {
		t.Errorf("a user's change of an administrator's reservation: %v", rep)
	}
	rep = c.Reservations(root, &api.ReservationRequest{Op: api.ReservationRequest_MODIFY, Ids: []string{"nosuch#1"}})
	if len(rep.Errors) != 1 || rep.Errors[0] != "nosuch#1: Advance reservation does not exist" {
		t.Errorf("an unknown reservation: %v", rep.Errors)
	}
	// A refused change left the reservation as it was, and the change
	// is in the store.
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.restoreRsvs(); err != nil {
		t.Fatal(err)
	}
	if r := c.rsvs[id]; slots(r) != 3 || r.End != begin.Add(150*time.Minute).Unix() || len(r.Users) != 1 {
		t.Errorf("stored: %v", r)
	}
}

// brsvs -c: the policies by name or all, an unknown name reported.
func TestRsvPoliciesList(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig+`
[[reservation_policies]]
name = "day"
users = ["alice"]
time_windows = ["8:00-18:00"]

[[reservation_policies]]
name = "night"
hosts = ["hostA"]
`, 4, 0)
	rep := c.Reservations(Caller{}, &api.ReservationRequest{Policies: []string{"all"}})
	if len(rep.Policies) != 2 || rep.Policies[0].Name != "day" || rep.Policies[0].TimeWindows[0] != "8:00-18:00" || len(rep.Reservations) != 0 {
		t.Errorf("-c all: %v", rep)
	}
	rep = c.Reservations(Caller{}, &api.ReservationRequest{Policies: []string{"night", "nosuch"}})
	if len(rep.Policies) != 1 || rep.Policies[0].Hosts[0] != "hostA" || len(rep.Errors) != 1 || rep.Errors[0] != "nosuch: Advance reservation policy does not exist" {
		t.Errorf("-c night nosuch: %v", rep)
	}
}
