package controller

// brsvadd and brsvmod -nosusp and -q (LSF's): whether a reservation's
// jobs suspend the other jobs they find on its slots when its window is
// open, and which queues' jobs may start on its slots before the window
// (lib/sched/resv_susp.go decides both). A job suspended for a
// reservation is always suspended, never ended, whatever its queue's
// terminate_when: the reservation borrows its slots for the window.

import (
	"fmt"
	"slices"

	"xce/lib/api"
	"xce/lib/config"
)

// The MODIFY fields of these options.
const (
	rsvFieldNoSusp = "no_susp" // -nosusp / -nosuspn
	rsvFieldQueues = "queues"  // -q / -qn
)

// rsvQueues checks brsvadd/brsvmod -q's queues: each is configured, once.
// "" when they are, else why not.
func rsvQueues(conf *config.Config, qs []string) ([]string, string) {
	var out []string
	for _, q := range qs {
		if conf.Queues[q] == nil {
			return nil, fmt.Sprintf("%s: %s", q, errNoQueue)
		}
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out, ""
}

// rsvSuspOpts sets -nosusp and -q of a new reservation from the request.
// "" when they are acceptable, else why not.
func rsvSuspOpts(conf *config.Config, r, in *api.Reservation) string {
	if in.NoSusp && r.Type == "sys" {
		return "-nosusp cannot be used with -s"
	}
	qs, msg := rsvQueues(conf, in.Queues)
	if msg != "" {
		return msg
	}
	r.NoSusp, r.Queues = in.NoSusp, qs
	return ""
}

// rsvModSusp is brsvmod's -nosusp/-nosuspn (no_susp) and -q/-qn
// (queues; -qn: none). "" when done, else why not.
func rsvModSusp(conf *config.Config, r, in *api.Reservation, field string) string {
	switch field {
	case rsvFieldNoSusp:
		if in.NoSusp && r.Type == "sys" {
			return "-nosusp cannot be used with a system reservation"
		}
		r.NoSusp = in.NoSusp
	case rsvFieldQueues:
		qs, msg := rsvQueues(conf, in.Queues)
		if msg != "" {
			return msg
		}
		r.Queues = qs
	}
	return ""
}

// suspendsForRsv reports whether a placement's job is one of a
// reservation (c.mu held): its victims are suspended, never ended.
func (c *Controller) suspendsForRsv(id int64, idx int32) string {
	r := c.jobs[key{id, idx}]
	if r == nil {
		return ""
	}
	return r.eff.GetReservation()
}
