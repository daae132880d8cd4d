package perfmon

import (
	"testing"
	"time"
)

func TestPeriods(t *testing.T) {
	var m Monitor
	t0 := time.Unix(1000, 0)
	var cur Totals
	if v := m.View(cur); v.Running || len(v.Rows) != 0 {
		t.Fatalf("stopped monitor shows %+v", v)
	}
	cur[JobsSubmitted] = 50 // before the start: not counted
	m.Start(t0, 10*time.Second, cur)
	cur[JobsSubmitted] += 7
	m.Tick(t0.Add(5*time.Second), cur) // within the period
	if v := m.View(cur); v.Periods != 0 || v.Rows[JobsSubmitted].Total != 7 || v.Rows[JobsSubmitted].Last != 0 {
		t.Fatalf("mid-period: %+v", v.Rows[JobsSubmitted])
	}
	m.Tick(t0.Add(10*time.Second), cur) // period 1: 7
	cur[JobsSubmitted] += 3
	m.Tick(t0.Add(20*time.Second), cur) // period 2: 3
	cur[JobsSubmitted] += 2             // under way
	v := m.View(cur)
	r := v.Rows[JobsSubmitted]
	want := Row{Name: "Jobs submitted", Key: "jobs_submitted", Last: 3, Max: 7, Min: 3, Avg: 5, Total: 12}
	if r != want || v.Periods != 2 || !v.Sampled.Equal(t0.Add(20*time.Second)) {
		t.Errorf("got %+v (%d periods), want %+v", r, v.Periods, want)
	}
	m.SetPeriod(t0.Add(25*time.Second), 30*time.Second, cur) // closes a period of 2
	if r := m.View(cur).Rows[JobsSubmitted]; r.Last != 2 || r.Min != 2 || r.Total != 12 {
		t.Errorf("after setperiod: %+v", r)
	}
	m.Stop()
	m.Start(t0.Add(30*time.Second), 0, cur)
	if v := m.View(cur); v.Period != 30*time.Second || v.Rows[JobsSubmitted].Total != 0 {
		t.Errorf("restart keeps the period and starts from nothing: %+v", v)
	}
}
