package config

import (
	"slices"

	"strings"
	"testing"
	"xce/lib/api"
)

const cuConfig = `
[cluster]
compute_unit_types = ["enclosure", "rack!"]

[hosts.a]
[hosts.b]
[hosts.c]
[hosts.d]

[host_groups.cd]
members = ["c", "d"]

[queues.normal]
exclusive_cu = "rack"

[[compute_units]]
name = "e2"
type = "enclosure"
members = ["cd"]

[[compute_units]]
name = "e1"
type = "enclosure"
members = ["a", "b"]

[[compute_units]]
name = "r1"
type = "rack"
members = ["e2", "e1"]
`

func TestComputeUnits(t *testing.T) {
	c, err := Parse("xce.toml", []byte(cuConfig))
	if err != nil {
		t.Fatal(err)
	}
	types, def := c.CUTypes()
	if !slices.Equal(types, []string{"enclosure", "rack"}) || def != "rack" {
		t.Errorf("types %v, default %q", types, def)
	}
	if got := c.CUHosts("r1"); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("r1 hosts %v", got)
	}
	if got := c.CUHosts("e2"); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("e2 hosts %v", got)
	}
	// The units print in file order and read back the same.
	text := c.Effective()
	if i, j := strings.Index(text, `name = "e2"`), strings.Index(text, `name = "e1"`); i < 0 || j < i {
		t.Errorf("units out of order:\n%s", text)
	}
	c2, err := Parse("effective.toml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if _, a, _ := strings.Cut(c2.Effective(), "\n"); !strings.HasSuffix(text, a) {
		t.Error("the effective configuration does not read back the same")
	}
	for _, tc := range []struct{ req, queue, err string }{
		{"cu[maxcus=1]", "normal", ""},
		{"cu[type=enclosure:balance]", "normal", ""},
		{"cu[type=cab]", "normal", "cu[type=cab]: cab is not a compute unit type (compute_unit_types: enclosure rack)"},
		{"cu[excl]", "normal", ""},
		{"cu[type=enclosure:excl]", "normal", `normal: Queue does not accept EXCLUSIVE jobs (cu[excl] needs the queue's exclusive_cu = "enclosure")`},
		{"{select[type==any]} || {cu[type=cab]}", "normal", "cab is not a compute unit type"},
	} {
		_, err := Layer(&api.JobSpec{Queue: tc.queue, ResReq: []string{tc.req}}, c)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.req, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want %q", tc.req, err, tc.err)
		}
	}
}
