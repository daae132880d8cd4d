package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"xce/lib/api"
	"xce/lib/client"
	"xce/lib/lsfout"
)

// Advance reservations: brsvadd, brsvs, brsvdel, brsvjob (LSF's).

// brsvadd reserves job slots for users during a one-time window (-b,
// -e) or a recurring one (-t). Times are LSF's
// [[[year:]month:]day:]hour:minute, the next such moment (-e: after the
// begin time); XCE also takes an ISO 8601 local time
// (2026-12-05T09:30:00) for a time to the second.
func brsvadd(args []string) int {
	var o brsvaddOpts
	cmd, code := newCommand(`brsvadd [-o] [-d "description"] [-N reservation_name] [-nosusp] [-q "queue_name ..."] {-u "user_name ..." | -g group_name} {[-unit slot] -n job_slots | -unit host -n number_hosts} {-m "host_name ..." [-R "res_req"] | [-m "host_name ..."] -R "res_req"} {-b begin_time -e end_time | -t time_window}
brsvadd [-d "description"] [-N reservation_name] [-q "queue_name ..."] -s {-m "host_name ..." [-R "res_req"] | [-m "host_name ..."] -R "res_req"} {-b begin_time -e end_time | -t time_window}`,
		"Add an advance reservation", func(a []string) int {
			if len(a) > 0 {
				fmt.Fprintf(sys.stderr, "brsvadd: unexpected argument %s\n", a[0])
				return 255
			}
			return 0
		})
	fs := cmd.Flags()
	brsvaddFlags(fs, &o)
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	req, err := o.request(fs.Changed, time.Now())
	if err != nil {
		fmt.Fprintln(sys.stderr, err)
		return 255
	}
	return rsvCall(req)
}

// brsvaddOpts are brsvadd's options.
type brsvaddOpts struct {
	slots                                                                     int
	hosts, resReq, users, group, begin, end, window, name, desc, unit, queues string
	open, system, nosusp                                                      bool
	// Refused with the reason (docs/lsf-compatibility.md).
	script, scriptTime, post, postTime string
	force, dynamic                     bool
}

// brsvaddFlags declares brsvadd's options.
func brsvaddFlags(fs *pflag.FlagSet, o *brsvaddOpts) {
	fs.IntVar(&o.slots, "n", 0, "number of job slots to reserve")
	fs.StringVar(&o.hosts, "m", "", "candidate hosts or host groups, in order")
	fs.StringVar(&o.resReq, "R", "", "resource requirement: hosts whose select matches")
	fs.StringVar(&o.users, "u", "", "users or user groups whose jobs may use the reservation")
	fs.StringVar(&o.group, "g", "", "a user group whose jobs may use the reservation")
	fs.StringVar(&o.begin, "b", "", "begin time of a one-time reservation")
	fs.StringVar(&o.end, "e", "", "end time of a one-time reservation")
	fs.StringVar(&o.window, "t", "", "time window of a recurring reservation: [day:]hour[:minute]-[day:]hour[:minute]")
	fs.StringVar(&o.name, "N", "", "reservation name (instead of user#N)")
	fs.BoolVar(&o.open, "o", false, "open reservation: its jobs keep running after the window")
	fs.StringVar(&o.desc, "d", "", "description")
	fs.BoolVar(&o.system, "s", false, "system reservation (maintenance): every slot of the hosts, for no job")
	fs.StringVar(&o.unit, "unit", "slot", "what -n counts: slot, or host (whole hosts)")
	fs.BoolVar(&o.nosusp, "nosusp", false, "do not suspend other jobs on the reserved slots when the window opens: the reservation's jobs wait for them")
	fs.StringVar(&o.queues, "q", "", "queues whose jobs may start on the reserved slots before the window (suspended when the reservation's jobs need them)")
	fs.StringVar(&o.script, "E", "", "pre-reservation script (not supported)")
	fs.StringVar(&o.scriptTime, "Et", "", "minutes before the window the pre-reservation script runs (not supported)")
	fs.StringVar(&o.post, "Ep", "", "post-reservation script (not supported)")
	fs.StringVar(&o.postTime, "Ept", "", "minutes before the window's end the post-reservation script runs (not supported)")
	fs.BoolVar(&o.force, "f", false, "LSF's -f (not supported)")
	fs.BoolVar(&o.dynamic, "p", false, "placeholder for a dynamically scheduled reservation (not supported)")
	for _, n := range []string{"E", "Et", "Ep", "Ept", "f", "p"} {
		_ = fs.MarkHidden(n)
	}
}

// request checks brsvadd's options (set: whether an option was given)
// and makes the request; times are read from now on.
func (o *brsvaddOpts) request(set func(string) bool, now time.Time) (*api.ReservationRequest, error) {
	switch {
	case set("E") || set("Et") || set("Ep") || set("Ept"):
		return nil, errors.New("-E, -Et, -Ep and -Ept are not supported: XCE runs no command outside a job; submit the script as a job of the reservation (bsub -U)")
	case o.dynamic:
		return nil, errors.New("-p is not supported: XCE has no dynamically scheduled reservations (brsvsub); give the hosts (-m, -R) and the window")
	case o.force:
		return nil, errors.New("-f is not supported: give the hosts (-m, -R); brsvmod addhost and rmhost change them later")
	case o.unit != "slot" && o.unit != "host":
		return nil, fmt.Errorf("%s: -unit is slot or host", o.unit)
	}
	r := &api.Reservation{Id: o.name, Open: o.open, Description: o.desc, TimeWindow: o.window, Users: strings.Fields(o.users),
		UnitHost: o.unit == "host", NoSusp: o.nosusp, Queues: strings.Fields(o.queues)}
	if o.group != "" {
		r.Users, r.Group = strings.Fields(o.group), true
	}
	for _, h := range strings.Fields(o.hosts) {
		r.Hosts = append(r.Hosts, &api.RsvHost{Host: h})
	}
	switch {
	case o.window != "" && (o.begin != "" || o.end != ""):
		return nil, errors.New("-t cannot be used with -b or -e")
	case o.window == "" && (o.begin == "" || o.end == ""):
		return nil, errors.New("A begin and end time (-b, -e) or a time window (-t) must be specified")
	case o.hosts == "" && o.resReq == "":
		return nil, errors.New("A host list (-m) or a resource requirement (-R) must be specified")
	case o.system && (o.users != "" || o.group != "" || o.open || set("n") || set("unit")):
		return nil, errors.New("-s cannot be used with -u, -g, -o, -n or -unit")
	case o.system && o.nosusp:
		return nil, errors.New("-nosusp cannot be used with -s: it applies to user reservations")
	case set("q") && len(r.Queues) == 0:
		return nil, errors.New("-q needs a queue name")
	}
	if o.system {
		r.Type = "sys" // every slot of every host chosen
	}
	if o.window == "" {
		b, err := parseRsvTime(o.begin, now)
		if err != nil {
			return nil, fmt.Errorf("%s: Bad time specification", o.begin)
		}
		e, err := parseRsvTime(o.end, b)
		if err != nil {
			return nil, fmt.Errorf("%s: Bad time specification", o.end)
		}
		r.Begin, r.End = b.Unix(), e.Unix()
	}
	return &api.ReservationRequest{Op: api.ReservationRequest_ADD, Rsv: r, Slots: int32(o.slots), ResReq: o.resReq}, nil
}

// parseRsvTime reads a brsvadd time: LSF's form, the next such moment
// after from, or an ISO 8601 local time (to the second).
func parseRsvTime(v string, from time.Time) (time.Time, error) {
	if strings.Contains(v, "T") || strings.Count(v, "-") == 2 {
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
			if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
				return t, nil
			}
		}
		return time.Time{}, errors.New("bad time")
	}
	return parseLSFTime(v, from)
}

// rsvCall sends a reservation request and prints its messages and errors.
func rsvCall(req *api.ReservationRequest) int {
	return fetchRsv(req, func(reply *api.ReservationReply) int {
		return printReply(reply.Messages, reply.Errors)
	})
}

// printReply prints a request's messages on stdout and its errors on
// stderr, and returns the exit code: 255 when there is an error.
func printReply(messages, errs []string) int {
	for _, m := range messages {
		fmt.Fprintln(sys.stdout, m)
	}
	for _, e := range errs {
		fmt.Fprintln(sys.stderr, e)
	}
	if len(errs) > 0 {
		return 255
	}
	return 0
}

func fetchRsv(req *api.ReservationRequest, show func(*api.ReservationReply) int) int {
	rc := 0
	if code := fetch(func(c *client.Client, cx context.Context) (*api.ReservationReply, error) {
		return c.Reservations(cx, req)
	}, func(reply *api.ReservationReply) error {
		rc = show(reply)
		return nil
	}); code != 0 {
		return code
	}
	return rc
}

// brsvdel deletes reservations.
func brsvdel(args []string) int {
	var ids []string
	cmd, code := newCommand("brsvdel reservation_ID ...", "Delete advance reservations", func(a []string) int {
		ids = a
		return 0
	})
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(ids) == 0 {
		fmt.Fprintln(sys.stderr, "Reservation ID must be specified")
		return 255
	}
	return rsvCall(&api.ReservationRequest{Op: api.ReservationRequest_DELETE, Ids: ids})
}

// brsvs shows the reservations: one row each, -l with status, type and
// jobs, -w without cutting the IDs.
func brsvs(args []string) int {
	var long, wide bool
	var ids []string
	var policies, planner, plannerZ string
	cmd, code := newCommand("brsvs [-l | -w] [reservation_ID ...]\nbrsvs [-l | -w] [-p all | -p \"host_name ...\" | -z all | -z \"host_name ...\"]\nbrsvs -c all | -c \"policy_name ...\"", "Show advance reservations", func(a []string) int {
		ids = a
		return 0
	})
	cmd.Flags().BoolVar(&long, "l", false, "long format: status, type and jobs")
	cmd.Flags().BoolVar(&wide, "w", false, "wide format: IDs not cut")
	cmd.Flags().StringVar(&policies, "c", "", "the advance reservation policies (all, or names)")
	cmd.Flags().StringVar(&planner, "p", "", "the weekly planner of these hosts or host groups (all: every host with a reservation)")
	cmd.Flags().StringVar(&plannerZ, "z", "", "as -p, without the periods nothing is reserved in")
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if cmd.Flags().Changed("c") {
		return brsvsPolicies(policies, long || wide || len(ids) > 0)
	}
	omit := cmd.Flags().Changed("z")
	if omit {
		if cmd.Flags().Changed("p") {
			fmt.Fprintln(sys.stderr, "-p and -z cannot be used together")
			return 255
		}
		planner = plannerZ
	}
	if (cmd.Flags().Changed("p") || omit) && (strings.TrimSpace(planner) == "" || len(ids) > 0) {
		fmt.Fprintln(sys.stderr, "-p and -z take all or host names, and no reservation ID")
		return 255
	}
	return fetchRsv(&api.ReservationRequest{Op: api.ReservationRequest_LIST, Ids: ids, Planner: strings.Fields(planner)}, func(reply *api.ReservationReply) int {
		for _, e := range reply.Errors {
			fmt.Fprintln(sys.stderr, e)
		}
		if len(reply.Reservations) == 0 && len(reply.Errors) > 0 {
			return 255
		}
		if err := lsfout.WriteRsvs(sys.stdout, reply.Reservations, long, wide, time.Local); err != nil {
			fmt.Fprintln(sys.stderr, err)
			return 255
		}
		if len(reply.Planners) > 0 {
			fmt.Fprintln(sys.stdout)
			if err := lsfout.WriteRsvPlanners(sys.stdout, reply.Planners, omit, time.Local); err != nil {
				fmt.Fprintln(sys.stderr, err)
				return 255
			}
		}
		return 0
	})
}

// brsvjob shows the jobs of a reservation as bjobs -l does.
func brsvjob(args []string) int {
	var ids []string
	cmd, code := newCommand("brsvjob reservation_ID", "Show the jobs of an advance reservation", func(a []string) int {
		ids = a
		return 0
	})
	if rc, done := execute(cmd, code, args, false); done {
		return rc
	}
	if len(ids) != 1 {
		fmt.Fprintln(sys.stderr, "Reservation ID must be specified")
		return 255
	}
	var jobs []string
	rc := fetchRsv(&api.ReservationRequest{Op: api.ReservationRequest_LIST, Ids: ids}, func(reply *api.ReservationReply) int {
		for _, e := range reply.Errors {
			fmt.Fprintln(sys.stderr, e)
		}
		for _, r := range reply.Reservations {
			for _, j := range r.Jobs {
				jobs = append(jobs, refString(&api.JobRef{JobId: j.JobId, ArrayIndex: j.ArrayIndex}))
			}
		}
		if len(reply.Errors) > 0 {
			return 255
		}
		return 0
	})
	if rc != 0 {
		return rc
	}
	if len(jobs) == 0 {
		fmt.Fprintln(sys.stdout, "No job found")
		return 0
	}
	return bjobs(append([]string{"-l"}, jobs...))
}
