package sim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/pelletier/go-toml/v2"

	"xce/lib/api"
	"xce/lib/policy"
	"xce/lib/sched"
)

// A reservations file (xced simulate --reservations) lists advance
// reservations as brsvadd would create them, on the replay's clock:
//
//	[[reservation]]
//	name = "course"            # brsvadd -N; default system#0, system#1, ...
//	users = ["u3"]             # -u (the trace's jobs use no reservation)
//	slots = 64                 # -n
//	hosts = ["h001", "rack1"]  # -m: candidates in order (host groups too); default every host
//	begin = "48h"              # -b: offset from the trace's start
//	end = "52h"                # -e
//	# time_window = "2:9:0-2:17:0"  # -t instead of begin and end
//	open = false               # -o
//	queues = ["short"]         # -q: these queues' jobs may start on its slots before a window
//	nosusp = false             # -nosusp
//
// The slots are allocated as the controller allocates brsvadd's: from the
// candidate hosts in order, less what earlier reservations of the file
// hold there during an overlapping window. The queues are checked
// against the run's configuration. nosusp is kept with the reservation as
// brsvadd keeps it, but changes nothing in a replay: only a reservation's
// own jobs suspend others, and the trace's jobs belong to no reservation.

// RsvRequest is one reservation of a reservations file.
type RsvRequest struct {
	Name       string   `toml:"name"`
	Users      []string `toml:"users"`
	Slots      int      `toml:"slots"`
	Hosts      []string `toml:"hosts"`
	Begin      string   `toml:"begin"`
	End        string   `toml:"end"`
	TimeWindow string   `toml:"time_window"`
	Open       bool     `toml:"open"`
	Queues     []string `toml:"queues"`
	NoSusp     bool     `toml:"nosusp"`
}

type rsvFile struct {
	Reservation []RsvRequest `toml:"reservation"`
}

// ReadReservations reads a reservations file.
func ReadReservations(path string) ([]RsvRequest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f rsvFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *toml.StrictMissingError
		if errors.As(err, &se) && len(se.Errors) > 0 {
			row, _ := se.Errors[0].Position()
			return nil, fmt.Errorf("%s:%d: unknown key %s (a reservation has name, users, slots, hosts, begin, end, time_window, open, queues, nosusp)",
				path, row, se.Errors[0].Key()[len(se.Errors[0].Key())-1])
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("%s:%d: %v", path, row, de)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range f.Reservation {
		if err := f.Reservation[i].check(); err != nil {
			return nil, fmt.Errorf("%s: reservation %d: %w", path, i+1, err)
		}
	}
	return f.Reservation, nil
}

// check validates what does not depend on the cluster.
func (q *RsvRequest) check() error {
	if q.Slots <= 0 {
		return errors.New("slots: the number of job slots must be a positive integer")
	}
	if q.TimeWindow != "" {
		if q.Begin != "" || q.End != "" {
			return errors.New("time_window cannot be used with begin or end")
		}
		if _, err := policy.ParseTimeWindow(q.TimeWindow); err != nil {
			return fmt.Errorf("time_window: %w", err)
		}
		return nil
	}
	b, e, err := q.times()
	if err != nil {
		return err
	}
	if e <= b {
		return errors.New("the begin time must be earlier than the end time")
	}
	return nil
}

// times are begin and end as offsets from the trace's start.
func (q *RsvRequest) times() (b, e time.Duration, err error) {
	if q.Begin == "" || q.End == "" {
		return 0, 0, errors.New("a begin and end (offsets such as 48h) or a time_window is required")
	}
	if b, err = time.ParseDuration(q.Begin); err != nil || b < 0 {
		return 0, 0, fmt.Errorf("begin %q: want an offset from the trace's start, such as 90m or 48h", q.Begin)
	}
	if e, err = time.ParseDuration(q.End); err != nil || e < 0 {
		return 0, 0, fmt.Errorf("end %q: want an offset from the trace's start, such as 90m or 48h", q.End)
	}
	return b, e, nil
}

// allocRsvs turns Options.RsvRequests into reservations on the run's
// hosts (appended to Options.Reservations).
func (e *eng) allocRsvs() error {
	if len(e.opt.RsvRequests) == 0 {
		return nil
	}
	groups := policy.HostGroups(e.conf)
	made := slices.Clone(e.opt.Reservations)
	// Windows are compared over the span of the one-time ones plus a week
	// (a recurring window repeats weekly at most).
	span := 8 * 24 * time.Hour
	for _, r := range made {
		if r.TimeWindow == "" {
			span = max(span, time.Unix(r.End, 0).Sub(Epoch)+8*24*time.Hour)
		}
	}
	for _, q := range e.opt.RsvRequests {
		if q.TimeWindow == "" {
			if _, en, err := q.times(); err == nil {
				span = max(span, en+8*24*time.Hour)
			}
		}
	}
	wins := map[*api.Reservation][]sched.Window{}
	windows := func(r *api.Reservation) []sched.Window {
		if ws, ok := wins[r]; ok {
			return ws
		}
		ws := policy.RsvWindows(r, Epoch, span)
		wins[r] = ws
		return ws
	}
	seq := 0
	for i, q := range e.opt.RsvRequests {
		r := &api.Reservation{Id: q.Name, Type: "sys", Creator: "sim", Users: q.Users, Open: q.Open, TimeWindow: q.TimeWindow, NoSusp: q.NoSusp}
		if r.Id == "" {
			r.Id = fmt.Sprintf("system#%d", seq)
			seq++
		}
		for _, qn := range q.Queues {
			if e.conf.Queues[qn] == nil {
				return fmt.Errorf("reservation %s: queues: %s: No such queue in the simulated cluster's configuration", r.Id, qn)
			}
			if !slices.Contains(r.Queues, qn) {
				r.Queues = append(r.Queues, qn)
			}
		}
		if q.TimeWindow == "" {
			b, en, err := q.times()
			if err != nil {
				return fmt.Errorf("reservation %s: %w", r.Id, err)
			}
			r.Begin, r.End = Epoch.Add(b).Unix(), Epoch.Add(en).Unix()
		}
		var cands []string
		seen := map[string]bool{}
		var add func(name string, depth int) bool
		add = func(name string, depth int) bool {
			if _, ok := e.hostIdx[name]; ok {
				if !seen[name] {
					seen[name] = true
					cands = append(cands, name)
				}
				return true
			}
			if name == "all" {
				for _, h := range e.snap.Hosts {
					add(h.Name, depth+1)
				}
				return true
			}
			if m, ok := groups[name]; ok && depth < 8 {
				for _, x := range m {
					add(x, depth+1)
				}
				return true
			}
			return false
		}
		if len(q.Hosts) == 0 {
			add("all", 0)
		}
		for _, h := range q.Hosts {
			if !add(h, 0) {
				return fmt.Errorf("reservation %s: %s: not a host or host group of the simulated cluster", r.Id, h)
			}
		}
		ws := windows(r)
		need := q.Slots
		for _, name := range cands {
			if need == 0 {
				break
			}
			held := 0
			for _, w := range ws {
				n := 0
				for _, o := range made {
					if overlaps(windows(o), w) {
						for _, h := range o.Hosts {
							if h.Host == name {
								n += int(h.Slots)
							}
						}
					}
				}
				held = max(held, n)
			}
			free := e.snap.Hosts[e.hostIdx[name]].MaxSlots - held
			if free <= 0 {
				continue
			}
			n := min(free, need)
			r.Hosts = append(r.Hosts, &api.RsvHost{Host: name, Slots: int32(n)})
			need -= n
		}
		if need > 0 {
			return fmt.Errorf("reservation %s (%d of the file): not enough hosts or job slots available for the reservation request (%d slots short)", r.Id, i+1, need)
		}
		made = append(made, r)
	}
	e.opt.Reservations = made
	return nil
}

// overlaps reports whether any of ws overlaps w.
func overlaps(ws []sched.Window, w sched.Window) bool {
	for _, o := range ws {
		if o.Start.Before(w.End) && w.Start.Before(o.End) {
			return true
		}
	}
	return false
}
