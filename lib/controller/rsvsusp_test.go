package controller

import (
	"slices"
	"testing"
	"time"

	"xce/lib/api"
)

// brsvadd and brsvmod -q and -nosusp: kept with the reservation, checked
// against the configured queues, refused for a system reservation.
func TestRsvSuspOptions(t *testing.T) {
	c, _ := newTestController(t, 4, 0)
	root := Caller{}
	begin := time.Now().Add(time.Hour).Truncate(time.Minute)
	add := func(in *api.Reservation) *api.ReservationReply {
		in.Begin, in.End, in.Hosts = begin.Unix(), begin.Add(time.Hour).Unix(), []*api.RsvHost{{Host: "hostA"}}
		return c.Reservations(root, &api.ReservationRequest{Op: api.ReservationRequest_ADD, Slots: 1, Rsv: in})
	}
	rep := add(&api.Reservation{Users: []string{"alice"}, NoSusp: true, Queues: []string{"high", "normal", "high"}})
	if len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	r := rep.Reservations[0]
	if !r.NoSusp || !slices.Equal(r.Queues, []string{"high", "normal"}) {
		t.Fatalf("nosusp %v queues %q", r.NoSusp, r.Queues)
	}
	if rep := add(&api.Reservation{Users: []string{"alice"}, Queues: []string{"nosuch"}}); len(rep.Errors) != 1 || rep.Errors[0] != "nosuch: No such queue" {
		t.Errorf("-q nosuch: %v", rep.Errors)
	}
	if rep := add(&api.Reservation{Type: "sys", NoSusp: true}); len(rep.Errors) != 1 || rep.Errors[0] != "-nosusp cannot be used with -s" {
		t.Errorf("-s -nosusp: %v", rep.Errors)
	}
	mod := func(fields []string, in *api.Reservation) *api.ReservationReply {
		return c.Reservations(root, &api.ReservationRequest{Op: api.ReservationRequest_MODIFY, Ids: []string{r.Id}, Fields: fields, Rsv: in})
	}
	if rep := mod([]string{"no_susp", "queues"}, &api.Reservation{}); len(rep.Errors) > 0 || rep.Reservations[0].NoSusp || len(rep.Reservations[0].Queues) > 0 {
		t.Errorf("-nosuspn -qn: %v %v", rep.Errors, rep.Reservations)
	}
	if rep := mod([]string{"queues"}, &api.Reservation{Queues: []string{"bad"}}); len(rep.Errors) != 1 || rep.Errors[0] != "bad: No such queue" {
		t.Errorf("-q bad: %v", rep.Errors)
	}
	// Kept in the snapshot's reservation for the scheduler.
	mod([]string{"no_susp", "queues"}, &api.Reservation{NoSusp: true, Queues: []string{"high"}})
	c.mu.Lock()
	rs := c.rsvs[r.Id]
	c.mu.Unlock()
	if !rs.NoSusp || !slices.Equal(rs.Queues, []string{"high"}) {
		t.Errorf("stored: nosusp %v queues %q", rs.NoSusp, rs.Queues)
	}
}
