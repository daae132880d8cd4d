package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"xce/lib/api"
	"xce/lib/sched"
)

// RsvHorizon is how far ahead a recurring reservation's windows are
// expanded for a cycle: a week and a day holds every weekly occurrence
// a job can reach unless its run limit is longer (one without a limit
// never starts on the slots anyway).
const RsvHorizon = 8 * 24 * time.Hour

// AdvRsvs are the advance reservations as lib/sched reads them at now:
// each with its windows from the current (or next) one until RsvHorizon
// (none for one that opens later: its jobs wait).
func AdvRsvs(rsvs []*api.Reservation, now time.Time) []sched.AdvRsv {
	var out []sched.AdvRsv
	for _, r := range rsvs {
		ws := RsvWindows(r, now, RsvHorizon)
		ar := sched.AdvRsv{ID: r.Id, Open: r.Open, Windows: ws, NoSusp: r.NoSusp, Queues: r.Queues}
		for _, h := range r.Hosts {
			ar.Hosts = append(ar.Hosts, sched.RsvHost{Host: h.Host, Slots: int(h.Slots)})
		}
		out = append(out, ar)
	}
	return out
}

// RsvWindows returns a reservation's windows that end after now and
// begin before now+horizon, in order.
func RsvWindows(r *api.Reservation, now time.Time, horizon time.Duration) []sched.Window {
	if r.TimeWindow == "" {
		w := sched.Window{Start: time.Unix(r.Begin, 0), End: time.Unix(r.End, 0)}
		if w.End.After(now) && w.Start.Before(now.Add(horizon)) {
			return []sched.Window{w}
		}
		return nil
	}
	tw, err := ParseTimeWindow(r.TimeWindow)
	if err != nil {
		return nil
	}
	ws := tw.Windows(now, horizon)
	if len(r.Disabled) > 0 {
		// brsvmod disable: those occurrences do not take place.
		ws = slices.DeleteFunc(ws, func(w sched.Window) bool { return slices.Contains(r.Disabled, w.Start.Unix()) })
	}
	return ws
}

// TimeWindow is a recurring window, "[day:]hour[:minute]-[day:]hour[:minute]"
// (LSF's brsvadd -t): daily without a day, weekly with one (0 is Sunday),
// in local time.
type TimeWindow struct {
	Weekly                     bool
	FromDay, FromHour, FromMin int
	ToDay, ToHour, ToMin       int
}

// ParseTimeWindow reads a recurring window; both ends must have the same
// form, as LSF requires.
func ParseTimeWindow(s string) (TimeWindow, error) {
	var tw TimeWindow
	from, to, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return tw, fmt.Errorf("%s: a time window is begin_time-end_time", s)
	}
	a, err := timeFields(from)
	if err != nil {
		return tw, fmt.Errorf("%s: %w", s, err)
	}
	b, err := timeFields(to)
	if err != nil {
		return tw, fmt.Errorf("%s: %w", s, err)
	}
	if len(a) != len(b) {
		return tw, fmt.Errorf("%s: the begin and end times must have the same form", s)
	}
	if len(a) == 3 {
		tw.Weekly = true
		tw.FromDay, tw.ToDay = a[0], b[0]
		a, b = a[1:], b[1:]
	}
	tw.FromHour, tw.ToHour = a[0], b[0]
	if len(a) > 1 {
		tw.FromMin, tw.ToMin = a[1], b[1]
	}
	if tw.FromDay > 6 || tw.ToDay > 6 || tw.FromHour > 23 || tw.ToHour > 23 || tw.FromMin > 59 || tw.ToMin > 59 {
		return tw, fmt.Errorf("%s: day 0-6, hour 0-23, minute 0-59", s)
	}
	if tw.length() == 0 {
		return tw, fmt.Errorf("%s: the window is empty", s)
	}
	return tw, nil
}

func timeFields(s string) ([]int, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 {
		return nil, fmt.Errorf("bad time %q", s)
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad time %q", s)
		}
		out[i] = n
	}
	return out, nil
}

// length is the window's length; an end before the begin wraps to the
// next day (or week).
func (tw TimeWindow) length() time.Duration {
	from := time.Duration(tw.FromHour)*time.Hour + time.Duration(tw.FromMin)*time.Minute
	to := time.Duration(tw.ToHour)*time.Hour + time.Duration(tw.ToMin)*time.Minute
	period := 24 * time.Hour
	if tw.Weekly {
		from += time.Duration(tw.FromDay) * 24 * time.Hour
		to += time.Duration(tw.ToDay) * 24 * time.Hour
		period *= 7
	}
	return ((to-from)%period + period) % period
}

// Windows returns the occurrences that end after now and begin before
// now+horizon.
func (tw TimeWindow) Windows(now time.Time, horizon time.Duration) []sched.Window {
	y, m, d := now.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	step, first := 1, -1
	if tw.Weekly {
		day = day.AddDate(0, 0, -int(day.Weekday())+tw.FromDay)
		step, first = 7, -1
	}
	var out []sched.Window
	for k := first; ; k++ {
		base := day.AddDate(0, 0, k*step)
		s := time.Date(base.Year(), base.Month(), base.Day(), tw.FromHour, tw.FromMin, 0, 0, base.Location())
		if !s.Before(now.Add(horizon)) {
			return out
		}
		e := s.Add(tw.length())
		if e.After(now) {
			out = append(out, sched.Window{Start: s, End: e})
		}
	}
}

// String writes the window as brsvs shows it: day:hour:minute (weekly)
// or hour:minute.
func (tw TimeWindow) String() string {
	if tw.Weekly {
		return fmt.Sprintf("%d:%d:%d-%d:%d:%d", tw.FromDay, tw.FromHour, tw.FromMin, tw.ToDay, tw.ToHour, tw.ToMin)
	}
	return fmt.Sprintf("%d:%d-%d:%d", tw.FromHour, tw.FromMin, tw.ToHour, tw.ToMin)
}

// RsvJob is the reservation a job of the reservations given names, or ""
// (none, or one that no longer exists: its jobs are then ordinary jobs,
// as LSF's are after brsvdel).
func RsvJob(id string, rsvs []sched.AdvRsv) string {
	if id == "" {
		return ""
	}
	for i := range rsvs {
		if rsvs[i].ID == id {
			return id
		}
	}
	return ""
}
