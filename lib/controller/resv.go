package controller

// Advance reservations (brsvadd, brsvs, brsvdel; LSF's): slots on hosts
// held for some users during a one-time or a recurring window. The
// controller owns them: it allocates a new reservation's slots from the
// hosts' slots less what overlapping reservations hold, keeps each in the
// store under m/rsv/<id> (replicated under HA as every store write is, and
// read back by a new leader), and gives lib/sched their windows in every
// snapshot, where the decision is made (lib/sched/resv.go). A job of a
// closed reservation is launched with its window's end as its termination
// deadline, so its shepherd sends it its warning action (-wa/-wt) first
// and ends it when the window closes, as LSF kills a closed
// reservation's jobs; an open reservation's jobs run on. A one-time
// reservation is removed once its window has passed. A job whose
// reservation no longer exists (deleted or expired) is scheduled as an
// ordinary job, as LSF does after brsvdel.

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/policy"
	"xce/lib/resreq"
	"xce/lib/sched"
)

// defaultRsvMinLength is LSF's shortest reservation.
const defaultRsvMinLength = 10 * time.Minute

// restoreRsvs reads the reservations from the store.
func (c *Controller) restoreRsvs() error {
	m, err := c.store.Meta("rsv/")
	if err != nil {
		return err
	}
	c.rsvs = map[string]*api.Reservation{}
	for _, v := range m {
		r := &api.Reservation{}
		if err := proto.Unmarshal(v, r); err != nil {
			slog.Warn("ignoring an unreadable advance reservation", "err", err)
			continue
		}
		c.rsvs[r.Id] = r
	}
	return nil
}

// saveRsv writes (or, with del, removes) a reservation (c.mu held).
func (c *Controller) saveRsv(r *api.Reservation, del bool) error {
	if del {
		return c.store.SetMeta("rsv/"+r.Id, nil)
	}
	b, err := proto.Marshal(r)
	if err != nil {
		return err
	}
	return c.store.SetMeta("rsv/"+r.Id, b)
}

// rsvList is the reservations in ID order (c.mu held).
func (c *Controller) rsvList() []*api.Reservation {
	out := make([]*api.Reservation, 0, len(c.rsvs))
	for _, r := range c.rsvs {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *api.Reservation) int { return strings.Compare(a.Id, b.Id) })
	return out
}

// Reservations serves brsvadd, brsvs, brsvdel and brsvmod.
func (c *Controller) Reservations(who Caller, req *api.ReservationRequest) *api.ReservationReply {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch req.Op {
	case api.ReservationRequest_ADD:
		return c.addRsv(who, req, time.Now())
	case api.ReservationRequest_DELETE:
		return c.delRsv(who, req)
	case api.ReservationRequest_MODIFY:
		return c.modRsv(who, req, time.Now())
	}
	if len(req.Policies) > 0 {
		return c.listRsvPolicies(req.Policies)
	}
	reply := c.listRsvs(req, time.Now())
	if len(req.Planner) > 0 {
		var errs []string
		reply.Planners, errs = c.rsvPlanners(req.Planner, time.Now())
		reply.Errors = append(reply.Errors, errs...)
	}
	return reply
}

// listRsvs is brsvs: the reservations with their use and jobs.
func (c *Controller) listRsvs(req *api.ReservationRequest, now time.Time) *api.ReservationReply {
	reply := &api.ReservationReply{}
	for _, r := range c.rsvList() {
		if len(req.Ids) > 0 && !slices.Contains(req.Ids, r.Id) {
			continue
		}
		out := proto.Clone(r).(*api.Reservation)
		ws := policy.RsvWindows(r, now, policy.RsvHorizon)
		if len(ws) > 0 {
			out.Active = !now.Before(ws[0].Start)
			out.NextBegin, out.NextEnd = ws[0].Start.Unix(), ws[0].End.Unix()
		}
		used := map[string]int32{}
		for _, rec := range c.jobs {
			if rec.eff.GetReservation() != r.Id {
				continue
			}
			out.Jobs = append(out.Jobs, &api.RsvJob{JobId: rec.job.JobId, ArrayIndex: rec.job.ArrayIndex, State: rec.job.State})
			if isRunning(rec.job.State) && out.Active {
				for _, hs := range rec.job.ExecHosts {
					used[hs.Host] += hs.Slots
				}
			}
		}
		slices.SortFunc(out.Jobs, func(a, b *api.RsvJob) int {
			if a.JobId != b.JobId {
				return int(a.JobId - b.JobId)
			}
			return int(a.ArrayIndex - b.ArrayIndex)
		})
		for _, h := range out.Hosts {
			h.Used = min(used[h.Host], h.Slots)
		}
		reply.Reservations = append(reply.Reservations, out)
	}
	if len(req.Ids) > 0 {
		for _, id := range req.Ids {
			if c.rsvs[id] == nil {
				reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Advance reservation does not exist", id))
			}
		}
	}
	return reply
}

// addRsv is brsvadd: administrators only.
func (c *Controller) addRsv(who Caller, req *api.ReservationRequest, now time.Time) *api.ReservationReply {
	fail := func(format string, a ...any) *api.ReservationReply {
		return &api.ReservationReply{Errors: []string{fmt.Sprintf(format, a...)}}
	}
	admin := c.isAdmin(who.UID)
	conf := c.config()
	if !admin && len(conf.RsvPolicies) == 0 {
		return fail("%s", errPermission)
	}
	in := req.Rsv
	if in == nil {
		return fail("No reservation given")
	}
	r := &api.Reservation{
		Users: in.Users, Open: in.Open, Description: in.Description, TimeWindow: in.TimeWindow,
		Begin: in.Begin, End: in.End, Created: now.Unix(), Group: in.Group, Type: "user", UnitHost: in.UnitHost,
	}
	r.Creator, _ = lookupUser(who.UID)
	system := in.Type == "sys" // brsvadd -s: for maintenance, no job uses it
	switch {
	case system && !admin:
		return fail("%s", errPermission)
	case system && len(r.Users) > 0:
		return fail("-s cannot be used with -u or -g")
	case system:
		r.Type, r.Open = "sys", false
	case len(r.Users) == 0:
		return fail("A user or user group (-u) is required")
	case r.Group || len(r.Users) > 1 || conf.UserGroups[r.Users[0]] != nil:
		r.Type = "group"
	}
	if msg := rsvSuspOpts(conf, r, in); msg != "" {
		return fail("%s", msg)
	}
	if req.Slots <= 0 && !system {
		if r.UnitHost {
			return fail("The number of hosts (-n) must be a positive integer")
		}
		return fail("The number of job slots (-n) must be a positive integer")
	}
	// The window.
	minLen := defaultRsvMinLength
	if l := conf.Cluster.AdvRsvMinLength; l > 0 {
		minLen = time.Duration(l) * time.Second
	}
	if r.TimeWindow != "" {
		tw, err := policy.ParseTimeWindow(r.TimeWindow)
		if err != nil {
			return fail("Bad time window: %v", err)
		}
		r.TimeWindow = tw.String()
		r.Begin, r.End = 0, 0
	} else {
		switch {
		case r.Begin <= 0 || r.End <= 0:
			return fail("A begin and end time (-b, -e) or a time window (-t) is required")
		case r.End <= r.Begin:
			return fail("The begin time must be earlier than the end time")
		case time.Unix(r.Begin, 0).Before(now.Add(-time.Minute)):
			return fail("The begin time cannot be earlier than the current time")
		}
	}
	ws := policy.RsvWindows(r, now, policy.RsvHorizon)
	if len(ws) > 0 && ws[0].End.Sub(ws[0].Start) < minLen {
		return fail("An advance reservation must be at least %s long", minLen)
	}
	// The hosts: -m in order (groups expanded), else every host; -R's
	// select keeps those that match.
	var asked []string
	for _, h := range in.Hosts {
		asked = append(asked, h.Host)
	}
	cands := c.rsvCandidates(conf, asked)
	if len(cands) == 0 && len(asked) > 0 {
		return fail("%s: %s", strings.Join(asked, " "), errBadHost)
	}
	if req.ResReq != "" {
		schema := conf.Schema()
		rr, err := resreq.Parse(req.ResReq, resreq.WithSchema(schema))
		if err != nil {
			return fail("Bad resource requirement syntax: %v", err)
		}
		if rr.Simple == nil {
			return fail("Bad resource requirement syntax: only a select string is used")
		}
		sel, err := schema.Compile(rr.Simple.Select, c.local())
		if err != nil {
			return fail("Bad resource requirement syntax: %v", err)
		}
		cands = slices.DeleteFunc(cands, func(name string) bool {
			return !sel.Match(c.schedHost(c.hosts[name], schema).Values)
		})
	}
	need := int(req.Slots)
	if system {
		r.UnitHost, need = true, len(cands) // every slot of every host chosen
		if need == 0 {
			return fail("Not enough hosts or job slots available for the reservation request")
		}
	}
	for _, name := range cands {
		if need == 0 {
			break
		}
		free := c.hosts[name].slots - c.rsvHeld(name, ws, "")
		if free <= 0 || r.UnitHost && free < c.hosts[name].slots {
			continue // -unit host: only hosts no other reservation holds
		}
		n, take := min(free, need), min(free, need)
		if r.UnitHost {
			n, take = 1, free // a whole host counts one and holds all its slots
		}
		r.Hosts = append(r.Hosts, &api.RsvHost{Host: name, Slots: int32(take)})
		need -= n
	}
	if need > 0 {
		return fail("Not enough hosts or job slots available for the reservation request")
	}
	if !admin && !system {
		if r.Policy = c.rsvPolicyFor(conf, r.Creator, r, ws); r.Policy == "" {
			return fail("%s: no advance reservation policy (reservation_policies) lets %s reserve these hosts at that time", errPermission, r.Creator)
		}
	}
	// The ID: -N's name, else the user's or group's next number.
	if in.Id != "" {
		if !validRsvName(in.Id) {
			return fail("%s: A reservation name begins with a letter and has letters, digits, underscores and dashes (at most 39)", in.Id)
		}
		if c.rsvs[in.Id] != nil {
			return fail("%s: Reservation name already exists", in.Id)
		}
		r.Id = in.Id
	} else {
		owner := "system"
		if !system {
			owner = r.Users[0]
		}
		seq := 0
		if m, err := c.store.Meta("rsvseq/" + owner); err == nil {
			if v, ok := m["rsvseq/"+owner]; ok {
				seq, _ = strconv.Atoi(string(v))
			}
		}
		for c.rsvs[fmt.Sprintf("%s#%d", owner, seq)] != nil {
			seq++
		}
		r.Id = fmt.Sprintf("%s#%d", owner, seq)
		if err := c.store.SetMeta("rsvseq/"+owner, []byte(strconv.Itoa(seq+1))); err != nil {
			return fail("Failed to record the reservation: %v", err)
		}
	}
	if err := c.saveRsv(r, false); err != nil {
		return fail("Failed to record the reservation: %v", err)
	}
	c.rsvs[r.Id] = r
	c.Kick()
	return &api.ReservationReply{Reservations: []*api.Reservation{r}, Messages: []string{fmt.Sprintf("Reservation \"%s\" is created", r.Id)}}
}

// validRsvName is LSF's rule for brsvadd -N.
func validRsvName(s string) bool {
	if s == "" || len(s) > 39 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, ch := range s {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			return false
		}
	}
	return true
}

// rsvCandidates expands -m (hosts, host groups, "all") into known hosts,
// in order, once each; no list means every host.
func (c *Controller) rsvCandidates(conf *config.Config, list []string) []string {
	if len(list) == 0 {
		return slices.Clone(c.hostNames)
	}
	var out []string
	seen := map[string]bool{}
	var add func(name string, depth int)
	add = func(name string, depth int) {
		switch {
		case depth > 8:
		case name == "all":
			for _, h := range c.hostNames {
				add(h, depth+1)
			}
		case conf.HostGroups[name] != nil:
			for _, m := range conf.HostGroups[name].Members {
				add(m, depth+1)
			}
		case c.hosts[name] != nil && !seen[name]:
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, h := range list {
		for _, w := range strings.Fields(h) {
			add(w, 0)
		}
	}
	return out
}

// rsvHeld is the most slots the reservations other than skip hold on a
// host during any of the windows ws.
func (c *Controller) rsvHeld(host string, ws []sched.Window, skip string) int {
	most := 0
	now := time.Now()
	for _, w := range ws {
		n := 0
		for _, o := range c.rsvs {
			if o.Id == skip {
				continue
			}
			for _, ow := range policy.RsvWindows(o, now, policy.RsvHorizon) {
				if ow.Start.Before(w.End) && w.Start.Before(ow.End) {
					for _, h := range o.Hosts {
						if h.Host == host {
							n += int(h.Slots)
						}
					}
					break
				}
			}
		}
		most = max(most, n)
	}
	return most
}

// delRsv is brsvdel: administrators delete any reservation, a user the
// ones they created.
func (c *Controller) delRsv(who Caller, req *api.ReservationRequest) *api.ReservationReply {
	reply := &api.ReservationReply{}
	admin := c.isAdmin(who.UID)
	name, _ := lookupUser(who.UID)
	for _, id := range req.Ids {
		r := c.rsvs[id]
		switch {
		case r == nil:
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Advance reservation does not exist", id))
			continue
		case !admin && r.Creator != name:
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: %s", id, errPermission))
			continue
		}
		if err := c.saveRsv(r, true); err != nil {
			reply.Errors = append(reply.Errors, fmt.Sprintf("%s: Failed to record the deletion: %v", id, err))
			continue
		}
		delete(c.rsvs, id)
		reply.Messages = append(reply.Messages, fmt.Sprintf("Reservation %s is being deleted", id))
	}
	c.Kick()
	return reply
}

// expireRsvs removes the one-time reservations whose window has passed.
func (c *Controller) expireRsvs(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	busy := c.rsvOverdue(now) // rsvend.go
	for id, r := range c.rsvs {
		if r.TimeWindow != "" || r.End > now.Unix() || busy[id] {
			continue
		}
		if err := c.saveRsv(r, true); err != nil {
			slog.Warn("remove an expired advance reservation", "id", id, "err", err)
			continue
		}
		delete(c.rsvs, id)
	}
}

// snapRsvs fills a snapshot's reservations and its jobs' (c.mu held).
func (c *Controller) snapRsvs(snap *sched.Snapshot, now time.Time) {
	if len(c.rsvs) == 0 {
		return
	}
	snap.AdvRsvs = policy.AdvRsvs(c.rsvList(), now)
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if r := c.jobs[key{j.Key.ID, j.Key.Index}]; r != nil {
			j.Rsv = policy.RsvJob(r.eff.GetReservation(), snap.AdvRsvs)
		}
	}
	for i := range snap.Running {
		a := &snap.Running[i]
		if r := c.jobs[key{a.Job.ID, a.Job.Index}]; r != nil {
			a.Rsv = policy.RsvJob(r.eff.GetReservation(), snap.AdvRsvs)
		}
	}
}

// checkRsvJob checks bsub -U / bmod -U: the reservation exists and the
// job's user is one of its users (c.mu held).
func (c *Controller) checkRsvJob(conf *config.Config, eff *api.JobSpec) error {
	id := eff.GetReservation()
	if id == "" {
		return nil
	}
	r := c.rsvs[id]
	if r == nil {
		return userErr("%s: Advance reservation does not exist", id)
	}
	if r.Type == "sys" {
		return userErr("%s: A system reservation (brsvadd -s) runs no jobs", id)
	}
	if !rsvUser(conf, r, eff.GetUser()) && !c.isAdmin(eff.GetUid()) {
		return userErr("%s: User does not have permission to use the advance reservation", id)
	}
	return nil
}

// rsvUser says whether user is one of the reservation's users, directly
// or through a user group.
func rsvUser(conf *config.Config, r *api.Reservation, user string) bool {
	groups := policy.UserGroups(conf)
	var in func(name string, depth int) bool
	in = func(name string, depth int) bool {
		if name == user || name == "all" {
			return true
		}
		if depth > 8 {
			return false
		}
		for _, m := range groups[name] {
			if in(m, depth+1) {
				return true
			}
		}
		return false
	}
	for _, u := range r.Users {
		if in(u, 0) {
			return true
		}
	}
	return false
}

// rsvLaunch sets a closed reservation's window end as the termination
// deadline of its job being launched (c.mu held): the shepherd warns the
// job (-wa/-wt) and ends it then.
func (c *Controller) rsvLaunch(j *api.Job) {
	eff := j.GetEffective()
	r := c.rsvs[eff.GetReservation()]
	if r == nil || r.Open {
		return
	}
	now := time.Now()
	ws := policy.RsvWindows(r, now, policy.RsvHorizon)
	if len(ws) == 0 || now.Before(ws[0].Start) {
		return
	}
	if end := ws[0].End.Unix(); eff.TermTime == 0 || end < eff.TermTime {
		eff.TermTime = end
	}
}

// rsvPolicyFor is the first reservation policy that lets user create r
// (its hosts allocated, ws its windows): user among its users, every host
// among its hosts, and every window inside one of its time windows. ""
// when none does.
func (c *Controller) rsvPolicyFor(conf *config.Config, user string, r *api.Reservation, ws []sched.Window) string {
	groups := policy.UserGroups(conf)
	hgroups := policy.HostGroups(conf)
	for _, p := range conf.RsvPolicies {
		if !inList(p.Users, user, groups) {
			continue
		}
		ok := true
		for _, h := range r.Hosts {
			ok = ok && inList(p.Hosts, h.Host, hgroups)
		}
		for _, w := range ws {
			ok = ok && inWindows(p.TimeWindows, w)
		}
		if ok {
			return p.Name
		}
	}
	return ""
}

// inList says whether name is in a policy list: names, groups (members
// expanded), "all", "~x" to leave x out; an empty list holds every name.
func inList(list []string, name string, groups map[string][]string) bool {
	if len(list) == 0 {
		return true
	}
	var member func(g string, depth int) bool
	member = func(g string, depth int) bool {
		if g == name || g == "all" {
			return true
		}
		if depth > 8 {
			return false
		}
		for _, m := range groups[g] {
			if member(m, depth+1) {
				return true
			}
		}
		return false
	}
	in := false
	for _, e := range list {
		if x, ok := strings.CutPrefix(e, "~"); ok {
			if member(x, 0) {
				return false
			}
			continue
		}
		in = in || member(e, 0)
	}
	return in
}

// inWindows says whether w lies inside one occurrence of one of the
// recurring windows (none: any time).
func inWindows(tws []string, w sched.Window) bool {
	if len(tws) == 0 {
		return true
	}
	for _, s := range tws {
		tw, err := policy.ParseTimeWindow(s)
		if err != nil {
			continue
		}
		for _, o := range tw.Windows(w.Start.Add(-8*24*time.Hour), 9*24*time.Hour) {
			if !w.Start.Before(o.Start) && !w.End.After(o.End) {
				return true
			}
		}
	}
	return false
}

// rsvRetime gives the running jobs of reservation r the termination
// deadline its window now sets (c.mu held): after brsvmod moves the end
// of an open window or makes the reservation open or closed, a closed
// reservation's jobs end when the window now does (or at their own -t
// when that is earlier), and an open one's only at their own -t. The
// deadline a job was launched with is its shepherd's; the new one goes
// the way bmod's new limits go.
func (c *Controller) rsvRetime(r *api.Reservation, now time.Time) {
	var end int64
	if !r.Open {
		if ws := policy.RsvWindows(r, now, policy.RsvHorizon); len(ws) > 0 && !now.Before(ws[0].Start) {
			end = ws[0].End.Unix()
		}
	}
	for _, rec := range c.running {
		if rec.eff.GetReservation() != r.Id {
			continue
		}
		spec, err := rec.eff.Spec()
		if err != nil {
			slog.Warn("decode a reservation job's effective spec", "job", rec.job.JobId, "err", err)
			continue
		}
		if end > 0 && (spec.TermTime == 0 || end < spec.TermTime) {
			spec.TermTime = end
		}
		if err := c.execOf(rec.job).SetLimits(rec.job.JobId, rec.job.ArrayIndex, spec); err != nil {
			slog.Warn("cannot move a reservation job's termination deadline", "job", rec.job.JobId, "index", rec.job.ArrayIndex, "err", err)
		}
	}
}

// rsvPlanners is brsvs -p/-z: the weekly planner of each host named
// (hosts, host groups; "all": every host a reservation holds slots on),
// for the week (Sunday 0:00 local time) that holds now (c.mu held).
func (c *Controller) rsvPlanners(list []string, now time.Time) ([]*api.RsvPlanner, []string) {
	y, m, d := now.Date()
	week := time.Date(y, m, d, 0, 0, 0, 0, now.Location()).AddDate(0, 0, -int(now.Weekday()))
	weekEnd := week.AddDate(0, 0, 7)
	rsvs := c.rsvList()
	wins := make([][]sched.Window, len(rsvs))
	held := map[string]bool{}
	for i, r := range rsvs {
		wins[i] = policy.RsvWindows(r, week, weekEnd.Sub(week))
		for _, h := range r.Hosts {
			held[h.Host] = true
		}
	}
	var names, errs []string
	for _, n := range list {
		if n == "all" {
			for _, h := range c.hostNames {
				if held[h] {
					names = append(names, h)
				}
			}
			continue
		}
		got := c.rsvCandidates(c.config(), []string{n})
		if len(got) == 0 {
			errs = append(errs, fmt.Sprintf("%s: %s", n, errBadHost))
		}
		names = append(names, got...)
	}
	var out []*api.RsvPlanner
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		p := &api.RsvPlanner{Host: name, WeekStart: week.Unix(), Slots: make([]int32, 7*144)}
		if h := c.hosts[name]; h != nil {
			p.MaxSlots = int32(h.slots)
		}
		for day := range 7 {
			base := week.AddDate(0, 0, day)
			for period := range 144 {
				from := base.Add(time.Duration(period) * 10 * time.Minute)
				to := from.Add(10 * time.Minute)
				n := int32(0)
				for i, r := range rsvs {
					for _, w := range wins[i] {
						if w.Start.Before(to) && from.Before(w.End) {
							for _, h := range r.Hosts {
								if h.Host == name {
									n += h.Slots
								}
							}
							break
						}
					}
				}
				p.Slots[day*144+period] = n
			}
		}
		out = append(out, p)
	}
	return out, errs
}
