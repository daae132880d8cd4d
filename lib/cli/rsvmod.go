package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"xce/lib/api"
)

// brsvmod changes a reservation (LSF's): -u/-g replace its users, -o/-on
// make it open or closed, -d its description, -b/-e its one-time window
// (a time, or +/-minutes from the current begin or end), -t its recurring
// window; the subcommands addhost and rmhost add or remove slots (-n) on
// hosts (-m, or -R's select for addhost), adduser and rmuser add or
// remove users.
func brsvmod(args []string) int {
	sub := ""
	if len(args) > 0 {
		switch args[0] {
		case "addhost", "rmhost", "adduser", "rmuser":
			sub, args = args[0], args[1:]
		case "disable":
			return brsvmodDisable(args[1:])
		}
	}
	var slots int
	var hosts, resReq, users, group, begin, end, window, desc string
	var open, closed bool
	var ids []string
	cmd, code := newCommand(`brsvmod [-o | -on] [-nosusp | -nosuspn] [-q "queue_name ..." | -qn] [-d "description"] [-u "user_name ..." | -g group_name] [[-b begin_time | [+|-]minutes] [-e end_time | [+|-]minutes] | -t time_window] reservation_ID
brsvmod addhost {-n job_slots -R "res_req" [-m "host_name ..."] | [-n job_slots] -m "host_name ..."} reservation_ID
brsvmod rmhost {-n job_slots [-m "host_name ..."] | [-n job_slots] -m "host_name ..."} reservation_ID
brsvmod adduser -u "user_name ..." reservation_ID
brsvmod rmuser -u "user_name ..." reservation_ID`,
		"Modify an advance reservation", func(a []string) int {
			ids = a
			return 0
		})
	fs := cmd.Flags()
	fs.IntVar(&slots, "n", 0, "addhost, rmhost: number of job slots to add or remove")
	fs.StringVar(&hosts, "m", "", "addhost, rmhost: hosts or host groups, in order")
	fs.StringVar(&resReq, "R", "", "addhost: hosts whose select matches")
	fs.StringVar(&users, "u", "", "the users or user groups (adduser, rmuser: to add or remove)")
	fs.StringVar(&group, "g", "", "a user group that replaces the users")
	fs.StringVar(&begin, "b", "", "new begin time, or +/-minutes from the current one")
	fs.StringVar(&end, "e", "", "new end time, or +/-minutes from the current one")
	fs.StringVar(&window, "t", "", "new time window of a recurring reservation")
	fs.BoolVar(&open, "o", false, "make the reservation open")
	fs.BoolVar(&closed, "on", false, "make the reservation closed")
	fs.StringVar(&desc, "d", "", "new description")
	var so rsvSuspMod
	fs.BoolVar(&so.nosusp, "nosusp", false, "do not suspend other jobs on the reserved slots when the window opens")
	fs.BoolVar(&so.nosuspn, "nosuspn", false, "suspend other jobs on the reserved slots when the window opens (the default)")
	fs.StringVar(&so.queues, "q", "", "queues whose jobs may start on the reserved slots before the window")
	fs.BoolVar(&so.qn, "qn", false, "no queue's jobs may start on the reserved slots before the window")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(ids) != 1 {
		fmt.Fprintln(sys.stderr, "Reservation ID must be specified")
		return 255
	}
	usage := func(msg string) int {
		fmt.Fprintln(sys.stderr, msg)
		return 255
	}
	set := func(name string) bool { return fs.Changed(name) }
	req := &api.ReservationRequest{Op: api.ReservationRequest_MODIFY, Ids: ids, Rsv: &api.Reservation{}, Slots: int32(slots), ResReq: resReq}
	for _, h := range strings.Fields(hosts) {
		req.Rsv.Hosts = append(req.Rsv.Hosts, &api.RsvHost{Host: h})
	}
	hostOpts := set("n") || set("m") || set("R")
	timeOpts := set("b") || set("e") || set("t")
	switch sub {
	case "addhost", "rmhost":
		if timeOpts || set("u") || set("g") || set("o") || set("on") || set("d") || so.any(set) {
			return usage("Only -n, -m and -R can be used with " + sub)
		}
		if sub == "rmhost" && set("R") {
			return usage("-R cannot be used with rmhost")
		}
		if !set("m") && !set("R") && (sub == "addhost" || !set("n")) {
			return usage("A host list (-m) must be specified with " + sub)
		}
		if set("n") && slots <= 0 {
			return usage("The number of job slots (-n) must be a positive integer")
		}
		req.HostOp = api.ReservationRequest_ADDHOST
		if sub == "rmhost" {
			req.HostOp = api.ReservationRequest_RMHOST
		}
		return rsvCall(req)
	case "adduser", "rmuser":
		if !set("u") || hostOpts || timeOpts || set("g") || set("o") || set("on") || set("d") || so.any(set) {
			return usage("Only -u can be used with " + sub + ", and it must be")
		}
		req.Rsv.Users, req.Fields = strings.Fields(users), []string{sub}
		return rsvCall(req)
	}
	switch {
	case hostOpts:
		return usage("-n, -m and -R must be used with the addhost or rmhost subcommand")
	case set("o") && set("on"):
		return usage("-o and -on cannot be used together")
	case set("u") && set("g"):
		return usage("-u and -g cannot be used together")
	case set("t") && (set("b") || set("e")):
		return usage("-t cannot be used with -b or -e")
	}
	if err := so.apply(set, req); err != nil {
		return usage(err.Error())
	}
	if set("u") {
		req.Rsv.Users, req.Fields = strings.Fields(users), append(req.Fields, "users")
	}
	if set("g") {
		req.Rsv.Users, req.Rsv.Group, req.Fields = strings.Fields(group), true, append(req.Fields, "users")
	}
	if set("o") || set("on") {
		req.Rsv.Open, req.Fields = open, append(req.Fields, "open")
	}
	if set("d") {
		req.Rsv.Description, req.Fields = desc, append(req.Fields, "description")
	}
	if set("t") {
		req.Rsv.TimeWindow, req.Fields = window, append(req.Fields, "time_window")
	}
	if set("b") || set("e") {
		cur, rc := currentRsv(ids[0])
		if cur == nil {
			return rc
		}
		b, e := time.Unix(cur.Begin, 0), time.Unix(cur.End, 0)
		var err error
		if set("b") {
			if b, err = rsvModTime(begin, b, time.Now()); err != nil {
				return usage(begin + ": Bad time specification")
			}
			req.Rsv.Begin, req.Fields = b.Unix(), append(req.Fields, "begin")
		}
		if set("e") {
			// LSF's form for -e is the next such moment after the begin.
			if e, err = rsvModTime(end, e, b); err != nil {
				return usage(end + ": Bad time specification")
			}
			req.Rsv.End, req.Fields = e.Unix(), append(req.Fields, "end")
		}
	}
	if len(req.Fields) == 0 {
		return usage("Nothing to modify: give an option or a subcommand")
	}
	return rsvCall(req)
}

// rsvModTime reads a brsvmod -b/-e value: +N or -N minutes from cur, else
// a time as brsvadd reads it (the next such moment after from).
func rsvModTime(v string, cur, from time.Time) (time.Time, error) {
	if len(v) > 1 && (v[0] == '+' || v[0] == '-') {
		n, err := strconv.Atoi(v[1:])
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("bad minutes %q", v)
		}
		if v[0] == '-' {
			n = -n
		}
		return cur.Add(time.Duration(n) * time.Minute), nil
	}
	return parseRsvTime(v, from)
}

// currentRsv fetches one reservation (for -b/-e relative to its window);
// nil with the exit code when it cannot.
func currentRsv(id string) (*api.Reservation, int) {
	var cur *api.Reservation
	rc := fetchRsv(&api.ReservationRequest{Op: api.ReservationRequest_LIST, Ids: []string{id}}, func(reply *api.ReservationReply) int {
		for _, e := range reply.Errors {
			fmt.Fprintln(sys.stderr, e)
		}
		if len(reply.Reservations) == 1 {
			cur = reply.Reservations[0]
			if cur.TimeWindow != "" {
				fmt.Fprintln(sys.stderr, "-b and -e apply to a one-time reservation; use -t for a recurring one")
				cur = nil
			}
		}
		if cur == nil {
			return 255
		}
		return 0
	})
	return cur, rc
}

// brsvmod disable: occurrences of a recurring reservation do not take
// place, those beginning in -td's dates (yyyy:mm:dd-yyyy:mm:dd, local
// time, both days included) or (-tn) the next one; -f does not ask
// first.
func brsvmodDisable(args []string) int {
	var dates string
	var next, force bool
	var ids []string
	cmd, code := newCommand(`brsvmod disable {-td "begin_date-end_date" | -tn} [-f] reservation_ID`,
		"Disable occurrences of a recurring advance reservation", func(a []string) int {
			ids = a
			return 0
		})
	fs := cmd.Flags()
	fs.StringVar(&dates, "td", "", "the dates whose occurrences to disable: yyyy:mm:dd-yyyy:mm:dd")
	fs.BoolVar(&next, "tn", false, "disable the next occurrence")
	fs.BoolVar(&force, "f", false, "do not ask for confirmation")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(ids) != 1 {
		fmt.Fprintln(sys.stderr, "Reservation ID must be specified")
		return 255
	}
	if (dates == "") == !next {
		fmt.Fprintln(sys.stderr, "Specify either -td or -tn with disable")
		return 255
	}
	req := &api.ReservationRequest{Op: api.ReservationRequest_MODIFY, Ids: ids, Fields: []string{"disable"}, DisableNext: next}
	what := "the next occurrence"
	if dates != "" {
		from, to, ok := strings.Cut(dates, "-")
		a, err1 := time.ParseInLocation("2006:1:2", strings.TrimSpace(from), time.Local)
		b, err2 := time.ParseInLocation("2006:1:2", strings.TrimSpace(to), time.Local)
		if !ok || err1 != nil || err2 != nil || b.Before(a) {
			fmt.Fprintf(sys.stderr, "%s: Bad time specification: want yyyy:mm:dd-yyyy:mm:dd\n", dates)
			return 255
		}
		req.DisableFrom, req.DisableTo = a.Unix(), b.AddDate(0, 0, 1).Unix()
		what = "the occurrences from " + a.Format("2006-01-02") + " to " + b.Format("2006-01-02")
	}
	if !force {
		fmt.Fprintf(sys.stdout, "Disable %s of reservation %s? [y/n] ", what, ids[0])
		var answer string
		fmt.Fscanln(sys.stdin, &answer)
		if !strings.HasPrefix(strings.ToLower(answer), "y") {
			fmt.Fprintln(sys.stdout, "Reservation not modified")
			return 0
		}
	}
	return rsvCall(req)
}

// rsvSuspMod are brsvmod's -nosusp/-nosuspn and -q/-qn.
type rsvSuspMod struct {
	nosusp, nosuspn, qn bool
	queues              string
}

// any reports whether one of them was given.
func (o *rsvSuspMod) any(set func(string) bool) bool {
	return set("nosusp") || set("nosuspn") || set("q") || set("qn")
}

// apply adds them to a MODIFY request.
func (o *rsvSuspMod) apply(set func(string) bool, req *api.ReservationRequest) error {
	switch {
	case o.nosusp && o.nosuspn:
		return errors.New("-nosusp and -nosuspn cannot be used together")
	case set("q") && o.qn:
		return errors.New("-q and -qn cannot be used together")
	case set("q") && len(strings.Fields(o.queues)) == 0:
		return errors.New("-q needs a queue name")
	}
	if o.nosusp || o.nosuspn {
		req.Rsv.NoSusp, req.Fields = o.nosusp, append(req.Fields, "no_susp")
	}
	if set("q") || o.qn {
		req.Rsv.Queues, req.Fields = strings.Fields(o.queues), append(req.Fields, "queues")
	}
	return nil
}
