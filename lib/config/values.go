package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Memory is an amount of memory in KB (the unit of api.JobSpec's
// mem_limit_kb). In xce.toml it is a string with a unit: "512MB", "64GB",
// "1.5TB" (KB, MB, GB, TB, or K, M, G, T; any case; 1 GB = 1024 MB).
type Memory int64

var memUnits = []struct {
	name string
	kb   int64
}{{"TB", 1 << 30}, {"GB", 1 << 20}, {"MB", 1 << 10}, {"KB", 1}}

// UnmarshalText reads "64GB".
func (m *Memory) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
	if i < 0 {
		return fmt.Errorf("%s: write the amount with a unit, as in \"64GB\" (KB, MB, GB or TB)", s)
	}
	num, unit := s[:i], strings.ToUpper(strings.TrimSpace(s[i:]))
	if !strings.HasSuffix(unit, "B") {
		unit += "B"
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return fmt.Errorf("%q is not an amount of memory; write it as in \"64GB\"", s)
	}
	for _, u := range memUnits {
		if u.name == unit {
			if f < 0 {
				return fmt.Errorf("%s: a memory amount cannot be negative", s)
			}
			kb := f * float64(u.kb)
			if kb > 1<<62 {
				return fmt.Errorf("%s: too large", s)
			}
			*m = Memory(kb + 0.5)
			return nil
		}
	}
	return fmt.Errorf("%s: unknown unit %q; use KB, MB, GB or TB", s, strings.TrimSpace(s[i:]))
}

// MarshalText writes the amount as String does.
func (m Memory) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// String returns the amount in the largest unit that holds it exactly:
// "64GB", "1536MB", "0KB".
func (m Memory) String() string {
	n, u := m.split()
	return strconv.FormatInt(n, 10) + u
}

// Human returns the amount as messages print it: "64 GB".
func (m Memory) Human() string {
	n, u := m.split()
	return strconv.FormatInt(n, 10) + " " + u
}

func (m Memory) split() (int64, string) {
	for _, u := range memUnits {
		if m != 0 && int64(m)%u.kb == 0 {
			return int64(m) / u.kb, u.name
		}
	}
	return int64(m), "KB"
}

// Duration is a length of time in whole seconds (the unit of api.JobSpec's
// run_limit_sec). In xce.toml it is a string in Go's duration syntax:
// "90m", "12h", "1h30m", "45s".
type Duration int64

// UnmarshalText reads "1h30m".
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Errorf("%s: write the time with a unit, as in \"90m\" or \"12h\"", s)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration; write it as in \"90m\", \"12h\" or \"1h30m\"", s)
	}
	if v < 0 {
		return fmt.Errorf("%s: a duration cannot be negative", s)
	}
	if v%time.Second != 0 {
		return fmt.Errorf("%s: durations are whole seconds", s)
	}
	*d = Duration(v / time.Second)
	return nil
}

// MarshalText writes the duration as String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// String returns "1h30m", "12h", "45s", "0s".
func (d Duration) String() string {
	s := (time.Duration(d) * time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Window is a time window of lsb.queues RUN_WINDOW/DISPATCH_WINDOW syntax:
// "[day:]hour[:minute]-[day:]hour[:minute]", days 0 (Sunday) to 6. Without
// days it recurs daily; "20:00-08:00" spans midnight.
type Window struct {
	From, To WindowEnd
}

// WindowEnd is one end of a window. Day is -1 for a daily window.
type WindowEnd struct {
	Day, Hour, Minute int
}

// UnmarshalText reads "20:00-08:00" or "5:18:00-1:08:00".
func (w *Window) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	from, to, ok := strings.Cut(s, "-")
	bad := func(why string) error {
		return fmt.Errorf("%q is not a time window (%s); write it as \"20:00-08:00\" or, with days 0 (Sunday) to 6, \"5:18:00-1:08:00\"", s, why)
	}
	if !ok {
		return bad("no '-'")
	}
	var err error
	if w.From, err = parseWindowEnd(from); err != nil {
		return bad(err.Error())
	}
	if w.To, err = parseWindowEnd(to); err != nil {
		return bad(err.Error())
	}
	if (w.From.Day < 0) != (w.To.Day < 0) {
		return bad("give a day at both ends or at neither")
	}
	if w.From == w.To {
		return bad("it is empty")
	}
	return nil
}

func parseWindowEnd(s string) (WindowEnd, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	var n []int
	for _, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return WindowEnd{}, fmt.Errorf("%q is not a number", p)
		}
		n = append(n, v)
	}
	e := WindowEnd{Day: -1}
	switch len(n) {
	case 1:
		e.Hour = n[0]
	case 2:
		e.Hour, e.Minute = n[0], n[1]
	case 3:
		e.Day, e.Hour, e.Minute = n[0], n[1], n[2]
	default:
		return e, errors.New("too many ':'")
	}
	switch {
	case e.Day > 6:
		return e, errors.New("days are 0 to 6")
	case e.Hour > 23:
		return e, errors.New("hours are 0 to 23")
	case e.Minute > 59:
		return e, errors.New("minutes are 0 to 59")
	}
	return e, nil
}

// MarshalText writes the window as String does.
func (w Window) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// String returns "20:00-08:00" or "5:18:00-1:08:00".
func (w Window) String() string { return w.From.String() + "-" + w.To.String() }

// String returns "hh:mm" or "d:hh:mm".
func (e WindowEnd) String() string {
	s := fmt.Sprintf("%02d:%02d", e.Hour, e.Minute)
	if e.Day >= 0 {
		s = strconv.Itoa(e.Day) + ":" + s
	}
	return s
}

// Contains reports whether t (in its own location) lies in the window; the
// start is inside, the end outside.
func (w Window) Contains(t time.Time) bool {
	at := t.Hour()*60 + t.Minute()
	from, to := w.From.Hour*60+w.From.Minute, w.To.Hour*60+w.To.Minute
	if w.From.Day >= 0 {
		at += int(t.Weekday()) * 24 * 60
		from += w.From.Day * 24 * 60
		to += w.To.Day * 24 * 60
	}
	if from < to {
		return at >= from && at < to
	}
	return at >= from || at < to
}
