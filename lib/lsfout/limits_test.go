package lsfout

import (
	"bytes"
	"testing"

	"xce/lib/api"
)

func limitRows() []*api.LimitUsage {
	amt := func(r string, used, lim float64) *api.LimitAmount {
		return &api.LimitAmount{Resource: r, Used: used, Limit: lim}
	}
	return []*api.LimitUsage{
		{Name: "chem_share", Users: "chem", Queues: "normal",
			Amounts: []*api.LimitAmount{amt("slots", 3, 64), amt("mem", 1536, 262144)}},
		{Name: "per_user_jobs", Users: "alice",
			Amounts: []*api.LimitAmount{amt("jobs", 2, 100)}},
		{Name: "host_share_for_every_host", Hosts: "node01.example.com",
			Amounts: []*api.LimitAmount{amt("slots", 4, 6), amt("mem", 2000.5, 14745.6), amt("swp", 0, 1024)}},
		{Name: "matlab", Projects: "genome", Amounts: []*api.LimitAmount{amt("matlab_lic", 2, 4), amt("jobs", 1, 5)}},
	}
}

// TestWriteLimits: blimits, with and without -w, and its empty answer.
func TestWriteLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		wide bool
		rows []*api.LimitUsage
	}{{"blimits", false, limitRows()}, {"blimits_wide", true, limitRows()}, {"blimits_empty", false, nil}} {
		var b bytes.Buffer
		if err := WriteLimits(&b, c.rows, c.wide); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, c.name, b.String())
	}
	rows := limitRows()
	rows[1].Apps = "fluent"
	var b bytes.Buffer
	if err := WriteLimits(&b, rows[:2], false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "blimits_apps", b.String())
}

// TestWriteLimitConfig: blimits -c, as lsb.resources Limit sections.
func TestWriteLimitConfig(t *testing.T) {
	n, zero := int32(64), int32(0)
	ls := []*api.LimitConfig{
		{Name: "chem_share", Users: []string{"chem", "~bob"}, Queues: []string{"normal"}, Slots: &n, Mem: "262144"},
		{Name: "per_user_jobs", PerUser: []string{"all"}, Jobs: &n},
		{Name: "host_share", PerHost: []string{"all"}, SlotsPerProcessor: 1.5, Mem: "90%", Tmp: "100"},
		{Name: "closed", Users: []string{"guest"}, Hosts: []string{"gpunodes"}, Slots: &zero},
		{Name: "lic", PerProject: []string{"genome", "chem"}, Apps: []string{"fluent"}, Resources: map[string]float64{"matlab_lic": 2, "abaqus": 10}},
	}
	var b bytes.Buffer
	if err := WriteLimitConfig(&b, ls); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "blimits_c", b.String())
}
