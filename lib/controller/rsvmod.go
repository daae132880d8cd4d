package controller

// brsvmod (LSF's): change a reservation's users, type, description or
// window, or add or remove its hosts' slots. The change is made on a
// copy, checked as brsvadd checks a new reservation (the window's length,
// the slots the other reservations hold, a user's policies for a new
// window or new hosts), and only then stored; a refused change leaves the
// reservation as it was.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/policy"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// The field names a MODIFY request's fields may hold.
const (
	rsvFieldUsers   = "users"       // -u/-g: replace the users
	rsvFieldAddUser = "adduser"     // adduser: add rsv.users
	rsvFieldRmUser  = "rmuser"      // rmuser: remove rsv.users
	rsvFieldOpen    = "open"        // -o / -on
	rsvFieldDesc    = "description" // -d
	rsvFieldBegin   = "begin"       // -b
	rsvFieldEnd     = "end"         // -e
	rsvFieldWindow  = "time_window" // -t
	rsvFieldDisable = "disable"     // disable -td / -tn
)

// modRsv is brsvmod: administrators change any reservation, a user the
// ones they created.
func (c *Controller) modRsv(who Caller, req *api.ReservationRequest, now time.Time) *api.ReservationReply {
	fail := func(format string, a ...any) *api.ReservationReply {
		return &api.ReservationReply{Errors: []string{fmt.Sprintf(format, a...)}}
	}
	if len(req.Ids) != 1 {
		return fail("Reservation ID must be specified")
	}
	id := req.Ids[0]
	old := c.rsvs[id]
	if old == nil {
		return fail("%s: Advance reservation does not exist", id)
	}
	admin := c.isAdmin(who.UID)
	name, _ := lookupUser(who.UID)
	if !admin && old.Creator != name {
		return fail("%s: %s", id, errPermission)
	}
	in := req.Rsv
	if in == nil {
		in = &api.Reservation{}
	}
	conf := c.config()
	r := proto.Clone(old).(*api.Reservation)
	oldWs := policy.RsvWindows(old, now, policy.RsvHorizon)
	active := len(oldWs) > 0 && !now.Before(oldWs[0].Start)
	timeChanged, hostsAdded := false, false
	for _, f := range req.Fields {
		switch f {
		case rsvFieldUsers:
			if len(in.Users) == 0 {
				return fail("A user or user group (-u) is required")
			}
			r.Users, r.Group = slices.Clone(in.Users), in.Group
		case rsvFieldAddUser:
			for _, u := range in.Users {
				if !slices.Contains(r.Users, u) {
					r.Users = append(r.Users, u)
				}
			}
		case rsvFieldRmUser:
			for _, u := range in.Users {
				if !slices.Contains(r.Users, u) {
					return fail("%s: User or user group is not in the advance reservation", u)
				}
			}
			r.Users = slices.DeleteFunc(r.Users, func(u string) bool { return slices.Contains(in.Users, u) })
			if len(r.Users) == 0 {
				return fail("Cannot remove all users and user groups from the advance reservation")
			}
		case rsvFieldOpen:
			r.Open = in.Open
		case rsvFieldDesc:
			r.Description = in.Description
		case rsvFieldBegin, rsvFieldEnd:
			if r.TimeWindow != "" {
				return fail("-b and -e apply to a one-time reservation; use -t for a recurring one")
			}
			timeChanged = true
			if f == rsvFieldBegin {
				if active && in.Begin != old.Begin {
					return fail("Cannot modify the start time of an active reservation")
				}
				r.Begin = in.Begin
			} else {
				r.End = in.End
			}
		case rsvFieldWindow:
			if r.TimeWindow == "" {
				return fail("-t applies to a recurring reservation; use -b and -e for a one-time one")
			}
			tw, err := policy.ParseTimeWindow(in.TimeWindow)
			if err != nil {
				return fail("Bad time window: %v", err)
			}
			timeChanged = true
			r.TimeWindow = tw.String()
			if active && tw.String() != old.TimeWindow {
				if ws := policy.RsvWindows(r, now, policy.RsvHorizon); len(ws) == 0 || !ws[0].Start.Equal(oldWs[0].Start) {
					return fail("Cannot modify the start time of an active reservation")
				}
			}
		case rsvFieldDisable:
			if msg := rsvDisable(r, req, now); msg != "" {
				return fail("%s", msg)
			}
		case rsvFieldNoSusp, rsvFieldQueues:
			if msg := rsvModSusp(conf, r, in, f); msg != "" {
				return fail("%s", msg)
			}
		default:
			return fail("Unknown reservation field %q", f)
		}
	}
	if len(r.Users) > 1 || r.Group || conf.UserGroups[r.Users[0]] != nil {
		r.Type = "group"
	} else {
		r.Type = "user"
	}
	if timeChanged && r.TimeWindow == "" {
		switch {
		case r.End <= r.Begin:
			return fail("The begin time must be earlier than the end time")
		case r.End <= now.Unix():
			return fail("The end time cannot be earlier than the current time")
		case r.Begin != old.Begin && time.Unix(r.Begin, 0).Before(now.Add(-time.Minute)):
			return fail("The begin time cannot be earlier than the current time")
		}
	}
	ws := policy.RsvWindows(r, now, policy.RsvHorizon)
	if timeChanged {
		minLen := defaultRsvMinLength
		if l := conf.Cluster.AdvRsvMinLength; l > 0 {
			minLen = time.Duration(l) * time.Second
		}
		if len(ws) > 0 && ws[0].End.Sub(ws[0].Start) < minLen {
			return fail("An advance reservation must be at least %s long", minLen)
		}
	}
	switch req.HostOp {
	case api.ReservationRequest_ADDHOST:
		if msg := c.rsvAddHosts(r, req, ws); msg != "" {
			return fail("%s", msg)
		}
		hostsAdded = true
	case api.ReservationRequest_RMHOST:
		if msg := c.rsvRmHosts(r, req); msg != "" {
			return fail("%s", msg)
		}
	}
	// The new window must still find its slots beside the other
	// reservations.
	if timeChanged {
		for _, h := range r.Hosts {
			hr := c.hosts[h.Host]
			if hr == nil || int(h.Slots) > hr.slots-c.rsvHeld(h.Host, ws, r.Id) {
				return fail("Not enough hosts or job slots available for the reservation request")
			}
		}
	}
	if !admin && (timeChanged || hostsAdded) {
		if r.Policy = c.rsvPolicyFor(conf, name, r, ws); r.Policy == "" {
			return fail("%s: no advance reservation policy (reservation_policies) lets %s reserve these hosts at that time", errPermission, name)
		}
	}
	if err := c.saveRsv(r, false); err != nil {
		return fail("Failed to record the reservation: %v", err)
	}
	c.rsvs[r.Id] = r
	if timeChanged || r.Open != old.Open {
		c.rsvRetime(r, now)
	}
	c.Kick()
	return &api.ReservationReply{Reservations: []*api.Reservation{r}, Messages: []string{fmt.Sprintf("Reservation \"%s\" is modified", r.Id)}}
}

// rsvAddHosts is brsvmod addhost: -n slots (or, without -n, every slot no
// other reservation holds) from -m's hosts in order, or from those -R
// selects. "" when done, else why not.
func (c *Controller) rsvAddHosts(r *api.Reservation, req *api.ReservationRequest, ws []sched.Window) string {
	conf := c.config()
	var asked []string
	for _, h := range req.GetRsv().GetHosts() {
		asked = append(asked, h.Host)
	}
	if len(asked) == 0 && req.ResReq == "" {
		return "A host list (-m) or a resource requirement (-R) must be specified"
	}
	if req.ResReq != "" && req.Slots <= 0 {
		return "The number of job slots (-n) must be given with -R"
	}
	cands := c.rsvCandidates(conf, asked)
	if len(cands) == 0 && len(asked) > 0 {
		return fmt.Sprintf("%s: %s", strings.Join(asked, " "), errBadHost)
	}
	if req.ResReq != "" {
		schema := conf.Schema()
		rr, err := resreq.Parse(req.ResReq, resreq.WithSchema(schema))
		if err != nil || rr.Simple == nil {
			return "Bad resource requirement syntax"
		}
		sel, err := schema.Compile(rr.Simple.Select, c.local())
		if err != nil {
			return fmt.Sprintf("Bad resource requirement syntax: %v", err)
		}
		cands = slices.DeleteFunc(cands, func(name string) bool {
			return !sel.Match(c.schedHost(c.hosts[name], schema).Values)
		})
	}
	need, all := int(req.Slots), req.Slots <= 0
	added := 0
	for _, name := range cands {
		if !all && need == 0 {
			break
		}
		var mine *api.RsvHost
		for _, h := range r.Hosts {
			if h.Host == name {
				mine = h
			}
		}
		free := c.hosts[name].slots - c.rsvHeld(name, ws, r.Id)
		if mine != nil {
			free -= int(mine.Slots)
		}
		if free <= 0 || r.UnitHost && (mine != nil || free < c.hosts[name].slots) {
			continue // -unit host: whole hosts only
		}
		n := free
		if !all {
			n = min(free, need)
			if r.UnitHost {
				n = free
				need--
			} else {
				need -= n
			}
		}
		added += n
		if mine != nil {
			mine.Slots += int32(n)
		} else {
			r.Hosts = append(r.Hosts, &api.RsvHost{Host: name, Slots: int32(n)})
		}
	}
	if need > 0 || added == 0 {
		return "Not enough hosts or job slots available for the reservation request"
	}
	return ""
}

// rsvRmHosts is brsvmod rmhost: -m alone removes those hosts; -n removes
// that many slots, from -m's hosts when given, else from the last hosts
// first. A reservation keeps at least one slot.
func (c *Controller) rsvRmHosts(r *api.Reservation, req *api.ReservationRequest) string {
	var asked []string
	for _, h := range req.GetRsv().GetHosts() {
		asked = append(asked, h.Host)
	}
	if len(asked) == 0 && req.Slots <= 0 {
		return "A host list (-m) or a number of job slots (-n) must be specified"
	}
	var from []*api.RsvHost
	if len(asked) > 0 {
		names := c.rsvCandidates(c.config(), asked)
		for _, name := range names {
			for _, h := range r.Hosts {
				if h.Host == name {
					from = append(from, h)
				}
			}
		}
		if len(from) == 0 {
			return fmt.Sprintf("%s: Host is not in the advance reservation", strings.Join(asked, " "))
		}
	} else {
		from = slices.Clone(r.Hosts)
		slices.Reverse(from)
	}
	have := 0
	for _, h := range from {
		have += int(h.Slots)
	}
	take := have
	if req.Slots > 0 && r.UnitHost {
		// -unit host: -n counts hosts, taken whole.
		if int(req.Slots) > len(from) {
			return "The number of hosts to remove is more than the reservation holds"
		}
		take = 0
		for _, h := range from[:req.Slots] {
			take += int(h.Slots)
		}
	} else if req.Slots > 0 {
		if int(req.Slots) > have {
			return "The number of job slots to remove is more than the reservation holds"
		}
		take = int(req.Slots)
	}
	total := 0
	for _, h := range r.Hosts {
		total += int(h.Slots)
	}
	if take >= total {
		return "Cannot remove all hosts and job slots from the advance reservation"
	}
	for _, h := range from {
		n := min(int(h.Slots), take)
		h.Slots -= int32(n)
		take -= n
	}
	r.Hosts = slices.DeleteFunc(r.Hosts, func(h *api.RsvHost) bool { return h.Slots <= 0 })
	return ""
}

// rsvDisable is brsvmod disable: the occurrences of a recurring window
// that begin in the -td dates, or (-tn) the next one, do not take place.
// The active occurrence cannot be disabled. "" when done, else why not.
func rsvDisable(r *api.Reservation, req *api.ReservationRequest, now time.Time) string {
	if r.TimeWindow == "" {
		return "disable applies to a recurring reservation (-t)"
	}
	horizon := policy.RsvHorizon
	if req.DisableTo > 0 {
		horizon = max(horizon, time.Unix(req.DisableTo, 0).Sub(now))
	}
	if horizon > 400*24*time.Hour {
		return "Disable at most a year of occurrences at once"
	}
	var off []int64
	for _, w := range policy.RsvWindows(r, now, horizon) {
		if !w.Start.After(now) {
			continue // active: it cannot be disabled
		}
		s := w.Start.Unix()
		if req.DisableNext {
			off = append(off, s)
			break
		}
		if s >= req.DisableFrom && s < req.DisableTo {
			off = append(off, s)
		}
	}
	if len(off) == 0 {
		return "No occurrence of the reservation to disable in the given period"
	}
	// Occurrences long past are forgotten.
	r.Disabled = slices.DeleteFunc(r.Disabled, func(t int64) bool { return t < now.Add(-8*24*time.Hour).Unix() })
	for _, t := range off {
		if !slices.Contains(r.Disabled, t) {
			r.Disabled = append(r.Disabled, t)
		}
	}
	slices.Sort(r.Disabled)
	return ""
}
