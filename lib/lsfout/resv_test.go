package lsfout

import (
	"bytes"
	"testing"
	"time"

	"xce/lib/api"
)

func rsvRows() []*api.Reservation {
	at := func(s string) int64 {
		t, err := time.Parse(time.DateTime, s)
		if err != nil {
			panic(err)
		}
		return t.Unix()
	}
	return []*api.Reservation{
		{Id: "alice#0", Type: "user", Creator: "root", Users: []string{"alice"}, Begin: at("2026-11-12 06:00:00"), End: at("2026-11-12 08:30:00"),
			Hosts:  []*api.RsvHost{{Host: "hostA", Slots: 4, Used: 2}, {Host: "hostB", Slots: 8}},
			Active: true, NextBegin: at("2026-11-12 06:00:00"), NextEnd: at("2026-11-12 08:30:00"), Description: "course",
			Jobs: []*api.RsvJob{{JobId: 12, State: api.JobState_RUN}, {JobId: 14, State: api.JobState_PEND}, {JobId: 9, State: api.JobState_DONE},
				{JobId: 15, ArrayIndex: 2, State: api.JobState_RUN}}},
		{Id: "maintenance_window_a", Type: "group", Creator: "root", Users: []string{"chem"}, TimeWindow: "5:18:0-5:20:0", Open: true,
			Queues: []string{"short", "night"}, NoSusp: true,
			Hosts: []*api.RsvHost{{Host: "hostC", Slots: 16}}, NextBegin: at("2026-11-13 18:00:00"), NextEnd: at("2026-11-13 20:00:00")},
	}
}

// TestWriteRsvs: brsvs, -w, -l and the empty answer.
func TestWriteRsvs(t *testing.T) {
	for _, c := range []struct {
		name       string
		long, wide bool
		rows       []*api.Reservation
	}{{"brsvs", false, false, rsvRows()}, {"brsvs_wide", false, true, rsvRows()}, {"brsvs_long", true, false, rsvRows()},
		{"brsvs_empty", false, false, nil}} {
		var b bytes.Buffer
		if err := WriteRsvs(&b, c.rows, c.long, c.wide, time.UTC); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, c.name, b.String())
	}
}

// TestWriteRsvPolicies: brsvs -c with a full policy, one of empty lists
// (every user and host, any time), and none.
func TestWriteRsvPolicies(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRsvPolicies(&b, []*api.RsvPolicy{
		{Name: "reservation1", Users: []string{"ugroup1", "~user1"}, Hosts: []string{"hostA", "hostB"}, TimeWindows: []string{"8:00-13:00"}},
		{Name: "anytime"},
	}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "brsvs_c", b.String())
	b.Reset()
	if err := WriteRsvPolicies(&b, nil); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "brsvs_c_empty", b.String())
}

// TestWriteRsvPlanners: brsvs -p (every period) and -z (only the periods
// something is reserved in), two hosts; and a system reservation's row.
func TestWriteRsvPlanners(t *testing.T) {
	week := time.Date(2026, 11, 8, 0, 0, 0, 0, time.UTC).Unix() // a Sunday
	a := make([]int32, PlannerPeriods)
	for p := 6 * 6; p < 8*6+3; p++ { // Thursday 6:00-8:30
		a[4*144+p] = 4
	}
	a[1*144+0] = 2 // Monday 0:00-0:10
	b := make([]int32, PlannerPeriods)
	ps := []*api.RsvPlanner{{Host: "hostA", MaxSlots: 8, WeekStart: week, Slots: a}, {Host: "hostB", MaxSlots: 4, WeekStart: week, Slots: b}}
	for _, c := range []struct {
		name string
		omit bool
	}{{"brsvs_p", false}, {"brsvs_z", true}} {
		var out bytes.Buffer
		if err := WriteRsvPlanners(&out, ps, c.omit, time.UTC); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, c.name, out.String())
	}
	var out bytes.Buffer
	if err := WriteRsvs(&out, []*api.Reservation{{Id: "system#0", Type: "sys", Begin: week + 3600, End: week + 7200,
		Hosts: []*api.RsvHost{{Host: "hostA", Slots: 8}}}}, false, false, time.UTC); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "brsvs_sys", out.String())
	// -l: a system reservation's -q queues, and no line for -nosusp (a
	// user reservation's option).
	out.Reset()
	if err := WriteRsvs(&out, []*api.Reservation{{Id: "system#0", Type: "sys", Creator: "root", Begin: week + 3600, End: week + 7200,
		Queues: []string{"short"}, Hosts: []*api.RsvHost{{Host: "hostA", Slots: 8}}}}, true, false, time.UTC); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "brsvs_sys_long", out.String())
}
