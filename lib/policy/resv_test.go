package policy

import (
	"testing"
	"time"

	"xce/lib/api"
)

func TestTimeWindow(t *testing.T) {
	loc := time.UTC
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, loc) // a Wednesday
	for _, c := range []struct {
		in, str     string
		first, last string // the first window's start and end
		n           int    // windows in 8 days
	}{
		{"9:0-12:0", "9:0-12:0", "2026-12-02 09:00", "2026-12-02 12:00", 9},
		{"22-2", "22:0-2:0", "2026-12-02 22:00", "2026-12-03 02:00", 8},
		{"5:18:0-5:20:0", "5:18:0-5:20:0", "2026-12-04 18:00", "2026-12-04 20:00", 1},
		{"6:23:0-0:1:0", "6:23:0-0:1:0", "2026-12-05 23:00", "2026-12-06 01:00", 1},
	} {
		tw, err := ParseTimeWindow(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if tw.String() != c.str {
			t.Errorf("%s: String %s, want %s", c.in, tw.String(), c.str)
		}
		ws := tw.Windows(now, RsvHorizon)
		if len(ws) != c.n {
			t.Errorf("%s: %d windows, want %d: %v", c.in, len(ws), c.n, ws)
		}
		if len(ws) > 0 {
			if got := ws[0].Start.Format("2006-01-02 15:04"); got != c.first {
				t.Errorf("%s: first starts %s, want %s", c.in, got, c.first)
			}
			if got := ws[0].End.Format("2006-01-02 15:04"); got != c.last {
				t.Errorf("%s: first ends %s, want %s", c.in, got, c.last)
			}
		}
	}
	for _, bad := range []string{"9", "9:0-12", "25-3", "1:2:3:4-5", "8-8", "a-b"} {
		if _, err := ParseTimeWindow(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	one := &api.Reservation{Id: "a#0", Begin: now.Add(time.Hour).Unix(), End: now.Add(2 * time.Hour).Unix()}
	if ws := AdvRsvs([]*api.Reservation{one}, now); len(ws) != 1 || len(ws[0].Windows) != 1 {
		t.Errorf("AdvRsvs: %v", ws)
	}
}
