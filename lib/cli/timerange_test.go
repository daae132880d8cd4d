package cli

import (
	"testing"
	"time"
)

func TestParseTimeRange(t *testing.T) {
	loc := time.FixedZone("test", 3600)
	now := time.Date(2026, 11, 30, 15, 4, 5, 0, loc)
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time { return time.Date(y, mo, d, h, mi, s, 0, loc) }
	dayEnd := func(y int, mo time.Month, d int) time.Time { return at(y, mo, d, 23, 59, 59) }
	epoch := time.Unix(0, 0).In(loc)
	for _, tc := range []struct {
		in         string
		start, end time.Time
	}{
		// One time: its whole span.
		{"2026/11/30", at(2026, 11, 30, 0, 0, 0), dayEnd(2026, 11, 30)},
		{"2026/2", at(2026, 2, 1, 0, 0, 0), dayEnd(2026, 2, 28)},
		{"2024/2/", at(2024, 2, 1, 0, 0, 0), dayEnd(2024, 2, 29)},
		{"2025/", at(2025, 1, 1, 0, 0, 0), dayEnd(2025, 12, 31)},
		{"11/", at(2026, 11, 1, 0, 0, 0), dayEnd(2026, 11, 30)},
		{"10/3", at(2026, 10, 3, 0, 0, 0), dayEnd(2026, 10, 3)},
		{"10/3/", at(2026, 10, 3, 0, 0, 0), dayEnd(2026, 10, 3)},
		{"7", at(2026, 11, 7, 0, 0, 0), dayEnd(2026, 11, 7)},
		{"9:30", at(2026, 11, 30, 9, 30, 0), at(2026, 11, 30, 9, 30, 59)},
		{"/9:30", at(2026, 11, 30, 9, 30, 0), at(2026, 11, 30, 9, 30, 59)},
		{"9:", at(2026, 11, 30, 9, 0, 0), at(2026, 11, 30, 9, 59, 59)},
		{"7/9:30", at(2026, 11, 7, 9, 30, 0), at(2026, 11, 7, 9, 30, 59)},
		{"10/3/9:", at(2026, 10, 3, 9, 0, 0), at(2026, 10, 3, 9, 59, 59)},
		{"2025/12/31/23:59", at(2025, 12, 31, 23, 59, 0), at(2025, 12, 31, 23, 59, 59)},
		// Two ends: the start's beginning, the end's last second.
		{"2026/11/1,2026/11/30", at(2026, 11, 1, 0, 0, 0), dayEnd(2026, 11, 30)},
		{"2026/10,2026/11", at(2026, 10, 1, 0, 0, 0), dayEnd(2026, 11, 30)},
		{"10/3,", at(2026, 10, 3, 0, 0, 0), now},
		{",10/3", epoch, dayEnd(2026, 10, 3)},
		{",", epoch, now},
		{"10/3,.", at(2026, 10, 3, 0, 0, 0), now},
		{".-7,", now.AddDate(0, 0, -7), now},
		{".-2:,.", now.Add(-2 * time.Hour), now},
		{".-0:30,", now.Add(-30 * time.Minute), now},
		{"@,@", at(2026, 11, 30, 0, 0, 0), dayEnd(2026, 11, 30)},
		{"@-1,@-1", at(2026, 11, 29, 0, 0, 0), dayEnd(2026, 11, 29)},
		{"8:,9:", at(2026, 11, 30, 8, 0, 0), at(2026, 11, 30, 9, 59, 59)},
	} {
		r, err := parseTimeRange(tc.in, now)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !r.start.Equal(tc.start) || !r.end.Equal(tc.end) {
			t.Errorf("%q: %v .. %v, want %v .. %v", tc.in, r.start, r.end, tc.start, tc.end)
		}
	}
	for _, bad := range []string{
		"", "x", "2026-11-30", "2026", "0", "32", "11/31", "2026/13", "2026/2/30", "1969/1/1",
		"25:00", "9:60", "9:30:00", ":30", "2026/11/9:", "2026//1", "/30", "1/2/3/4",
		"2026/11/30,2026/11/1", "1,2,3", ".", "@", ".-", ".-2026/1/1,", "+1,", "12345",
		"10/3/9:30/", "9:30,8:", ".-x,", "7,.-y",
	} {
		if r, err := parseTimeRange(bad, now); err == nil {
			t.Errorf("%q accepted: %v .. %v", bad, r.start, r.end)
		}
	}
}

// FuzzParseTimeRange: whatever the text, the parser does not panic, and a
// range it accepts does not end before it starts.
func FuzzParseTimeRange(f *testing.F) {
	for _, s := range []string{"2026/11/30", "2026/11/1,2026/11/30", ",", ".-7,", "@-1,@", "10/3/9:30,",
		"2025/", "11/", "/9:30", "9:", "1969/1/1", "2026/2/30", "25:00", ",.-0:30", "1/2/3/4:5"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseTimeRange(s, now)
		if err == nil && r.end.Before(r.start) {
			t.Errorf("%q: %v .. %v", s, r.start, r.end)
		}
	})
}
