package lsfout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

// The formats on the calendar days where a date's width changes: a
// single-digit day (LSF and OpenLava pad it with a space everywhere: the
// SUBMIT_TIME column, the job report, bjobs -l/-UF and bhist -l, so the
// column parsers sites have keep working on the 1st to the 9th), and
// a job that spans 31 Dec -> 1 Jan. The golden tests mask dates; these pin
// them down exactly, with a clock and zone that do not depend on the day
// the test runs.
func TestFormatsAtCalendarEdges(t *testing.T) {
	ts := func(y int, m time.Month, d, h, min, s int) int64 {
		return time.Date(y, m, d, h, min, s, 0, testZone).UnixNano()
	}
	for _, tc := range []struct {
		name          string
		submit, start int64
		now           time.Time
		want          []string // lines (or line starts) each format must hold
	}{
		{
			name: "single-digit day", submit: ts(2026, time.December, 1, 9, 5, 7), start: ts(2026, time.December, 1, 9, 5, 9),
			now: time.Date(2026, time.December, 1, 9, 6, 0, 0, testZone),
			want: []string{
				"table:1234    user1   RUN   normal     hostA       hostB       sleep 100  Dec  1 09:05",
				"long:Tue Dec  1 09:05:07: Submitted from host <hostA>",
				"long:Tue Dec  1 09:05:09: Started 1 Task(s) on Host(s) <hostB>",
				"uf:Tue Dec  1 09:05:07: Submitted from host <hostA>, CWD <$HOME/work>;",
				"stats:12/01-09:05:07",
			},
		},
		{
			name: "year end", submit: ts(2026, time.December, 31, 23, 59, 59), start: ts(2027, time.January, 1, 0, 0, 1),
			now: time.Date(2027, time.January, 1, 0, 1, 0, 0, testZone),
			want: []string{
				"table:1234    user1   RUN   normal     hostA       hostB       sleep 100  Dec 31 23:59",
				"long:Thu Dec 31 23:59:59: Submitted from host <hostA>",
				"long:Fri Jan  1 00:00:01: Started 1 Task(s) on Host(s) <hostB>",
				"uf:Fri Jan  1 00:00:01: Started 1 Task(s) on Host(s) <hostB>",
				"stats:12/31-23:59:59",
				"stats:01/01-00:00:01",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := jobRunning()
			j.SubmitTime, j.StartTime = tc.submit, tc.start
			j.Usage = nil
			opt := JobsOptions{Now: tc.now, Location: testZone}
			outputs := map[string]string{}
			var b bytes.Buffer
			if err := WriteJobs(&b, []*api.Job{j}, opt); err != nil {
				t.Fatal(err)
			}
			outputs["table"] = b.String()
			outputs["long"] = writeLong(t, []*api.Job{j}, opt)
			uf := opt
			uf.Unformatted = true
			outputs["uf"] = writeLong(t, []*api.Job{j}, uf)
			outputs["stats"] = statsTime(tc.submit, testZone) + "\n" + statsTime(tc.start, testZone) + "\n"
			for _, w := range tc.want {
				kind, line, _ := strings.Cut(w, ":")
				if !containsLineStart(outputs[kind], line) {
					t.Errorf("%s output has no line starting %q:\n%s", kind, line, outputs[kind])
				}
			}
		})
	}
}

// The job report's ctime dates pad the day ("Tue Dec  1 09:05:07 2026").
func TestReportTimeCalendarEdges(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, time.December, 1, 9, 5, 7, 0, time.Local), "Tue Dec  1 09:05:07 2026"},
		{time.Date(2026, time.December, 31, 23, 59, 59, 0, time.Local), "Thu Dec 31 23:59:59 2026"},
		{time.Date(2027, time.January, 1, 0, 0, 1, 0, time.Local), "Fri Jan  1 00:00:01 2027"},
	} {
		if got := reportTime(tc.at.UnixNano()); got != tc.want {
			t.Errorf("reportTime(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func containsLineStart(s, prefix string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
