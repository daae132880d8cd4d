package cli

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// A time range as bhist -S/-C/-D (and bacct) take it: "start,end", where
// each end is a time in LSF's form [year/][month/][day][/hour:minute|/hour:]
// and either may be left out (",end" from the beginning of time, "start,"
// up to now). A time names a span as long as its smallest field (a day, a
// month, an hour...): a start means the beginning of its span, an end the
// last second of it, so "2026/11/30" alone means that whole day and
// "2026/11,2026/12" the two months. "." is now and "@" today; ".-" and "@-"
// followed by a time subtract its fields from now or from today (".-7"
// seven days ago, ".-2:" two hours ago).
//
// How the fields are told apart (as LSF's getBEtime does): a number before
// a "/" is a year when it is larger than 12, else a month; a lone number
// is a day of the current month; "H:M" and "H:" are a time of today.
// Years before 1970 are refused (XCE: LSF's own limit is 1993-2038).
type timeRange struct {
	start, end time.Time
}

// contains says whether t lies in the range (both ends included).
func (r timeRange) contains(t time.Time) bool {
	return !t.Before(r.start) && !t.After(r.end)
}

var errBadTime = errors.New("Bad time specification")

// parseTimeRange reads a time range relative to now (in now's location).
func parseTimeRange(s string, now time.Time) (timeRange, error) {
	startS, endS, hasComma := strings.Cut(s, ",")
	if !hasComma {
		// One time: its whole span.
		if strings.ContainsAny(s, ".@") {
			return timeRange{}, errBadTime
		}
		sp, err := parseTimeSpec(s, now)
		if err != nil {
			return timeRange{}, err
		}
		return timeRange{sp.begin, sp.end}, nil
	}
	if strings.Contains(endS, ",") {
		return timeRange{}, errBadTime
	}
	var r timeRange
	var err error
	if startS == "" {
		r.start = time.Unix(0, 0).In(now.Location())
	} else if r.start, err = timePoint(startS, now, false); err != nil {
		return timeRange{}, err
	}
	if endS == "" {
		r.end = now
	} else if r.end, err = timePoint(endS, now, true); err != nil {
		return timeRange{}, err
	}
	if r.start.After(r.end) {
		return timeRange{}, errBadTime
	}
	return r, nil
}

// timePoint is one end of a range: the beginning (or, for the end, the
// last second) of a time's span, or a point relative to now or today.
func timePoint(s string, now time.Time, isEnd bool) (time.Time, error) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	var base time.Time
	switch {
	case s == ".":
		return now, nil
	case s == "@":
		if isEnd {
			return today.AddDate(0, 0, 1).Add(-time.Second), nil
		}
		return today, nil
	case strings.HasPrefix(s, ".-"):
		base = now
	case strings.HasPrefix(s, "@-"):
		base = today
		if isEnd {
			base = today.AddDate(0, 0, 1).Add(-time.Second)
		}
	default:
		sp, err := parseTimeSpec(s, now)
		if err != nil {
			return time.Time{}, err
		}
		if isEnd {
			return sp.end, nil
		}
		return sp.begin, nil
	}
	f, err := parseFields(s[2:])
	if err != nil || f.has(fYear) {
		return time.Time{}, errBadTime
	}
	t := base.AddDate(0, -f.month, -f.day)
	t = t.Add(-time.Duration(f.hour)*time.Hour - time.Duration(f.minute)*time.Minute)
	return t, nil
}

// The fields a time spells out.
const (
	fYear = 1 << iota
	fMonth
	fDay
	fHour
	fMinute
)

type timeFields struct {
	set                            int
	year, month, day, hour, minute int
}

func (f timeFields) has(bit int) bool { return f.set&bit != 0 }

// parseFields reads [year/][month/][day][/hour:minute|/hour:] into its
// fields, checking only their syntax and ranges.
func parseFields(s string) (timeFields, error) {
	var f timeFields
	if s == "" {
		return f, errBadTime
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '/' && c != ':' {
			return f, errBadTime
		}
	}
	date, clock := s, ""
	if i := strings.IndexByte(s, ':'); i >= 0 {
		// The time of day is what follows the last "/" before the ":"
		// ("/10:00", with nothing before the "/", is today at 10:00).
		j := strings.LastIndexByte(s[:i], '/')
		date, clock = "", s[j+1:]
		if j > 0 {
			date = s[:j]
		}
		h, m, _ := strings.Cut(clock, ":")
		if strings.Contains(m, ":") || h == "" {
			return f, errBadTime
		}
		var err error
		if f.hour, err = field(h, 0, 23); err != nil {
			return f, err
		}
		f.set |= fHour
		if m != "" {
			if f.minute, err = field(m, 0, 59); err != nil {
				return f, err
			}
			f.set |= fMinute
		}
		if date == "" {
			return f, nil
		}
	}
	parts := strings.Split(date, "/")
	if clock == "" && len(parts) > 1 && parts[len(parts)-1] == "" {
		// "2026/11/" or "11/": the trailing "/" ends the date.
		parts = parts[:len(parts)-1]
		if len(parts) == 1 {
			// "11/" is a month, "2026/" a year.
			n, err := field(parts[0], 1, 9999)
			if err != nil {
				return f, err
			}
			if n > 12 {
				return yearField(f, n)
			}
			f.month, f.set = n, f.set|fMonth
			return f, nil
		}
	}
	for _, p := range parts {
		if p == "" {
			return f, errBadTime
		}
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := field(p, 0, 9999)
		if err != nil {
			return f, err
		}
		nums[i] = n
	}
	var err error
	switch len(nums) {
	case 1: // day
		f.day, f.set = nums[0], f.set|fDay
	case 2: // year/month or month/day
		if nums[0] > 12 {
			if f, err = yearField(f, nums[0]); err != nil {
				return f, err
			}
			f.month, f.set = nums[1], f.set|fMonth
		} else {
			f.month, f.day, f.set = nums[0], nums[1], f.set|fMonth|fDay
		}
	case 3: // year/month/day
		if f, err = yearField(f, nums[0]); err != nil {
			return f, err
		}
		f.month, f.day, f.set = nums[1], nums[2], f.set|fMonth|fDay
	default:
		return f, errBadTime
	}
	if f.has(fMonth) && (f.month < 1 || f.month > 12) {
		return f, errBadTime
	}
	if f.has(fDay) && (f.day < 1 || f.day > 31) {
		return f, errBadTime
	}
	if f.has(fHour) && !f.has(fDay) {
		// "month/day/hour:" needs the day; "year/month/hour:" is not a form.
		if f.has(fMonth) || f.has(fYear) {
			return f, errBadTime
		}
	}
	return f, nil
}

func yearField(f timeFields, n int) (timeFields, error) {
	if n < 1970 {
		return f, errBadTime
	}
	f.year, f.set = n, f.set|fYear
	return f, nil
}

func field(s string, lo, hi int) (int, error) {
	if s == "" || len(s) > 4 {
		return 0, errBadTime
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errBadTime
	}
	return n, nil
}

// span is the stretch of time a time names.
type span struct{ begin, end time.Time }

// parseTimeSpec reads an absolute time; the fields it leaves out before
// its first one come from now.
func parseTimeSpec(s string, now time.Time) (span, error) {
	f, err := parseFields(s)
	if err != nil {
		return span{}, err
	}
	y, mo, d := now.Year(), int(now.Month()), now.Day()
	if f.has(fYear) {
		y = f.year
	}
	if f.has(fMonth) {
		mo = f.month
	}
	if f.has(fDay) {
		d = f.day
	}
	loc := now.Location()
	var begin, next time.Time
	switch {
	case f.has(fMinute):
		begin = time.Date(y, time.Month(mo), d, f.hour, f.minute, 0, 0, loc)
		next = begin.Add(time.Minute)
	case f.has(fHour):
		begin = time.Date(y, time.Month(mo), d, f.hour, 0, 0, 0, loc)
		next = begin.Add(time.Hour)
	case f.has(fDay):
		begin = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, loc)
		next = begin.AddDate(0, 0, 1)
	case f.has(fMonth):
		begin = time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, loc)
		next = begin.AddDate(0, 1, 0)
	default: // a year alone ("2026/")
		begin = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
		next = begin.AddDate(1, 0, 0)
	}
	// A day the month does not have (11/31) is refused, not moved on.
	if f.has(fDay) && begin.Day() != d {
		return span{}, errBadTime
	}
	return span{begin, next.Add(-time.Second)}, nil
}
