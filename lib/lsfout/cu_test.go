package lsfout

import (
	"strings"
	"testing"

	"xce/lib/api"
)

func TestWriteComputeUnits(t *testing.T) {
	units := []*api.ComputeUnit{
		{Name: "encl1", Type: "enclosure", Members: []string{"hostA", "hg1"}, Hosts: []string{"hostA", "hostB", "hostC"}},
		{Name: "encl2", Type: "enclosure", Members: []string{"hostD"}, Hosts: []string{"hostD"}},
		{Name: "rack1", Type: "rack", Members: []string{"encl1", "encl2"}, Hosts: []string{"hostA", "hostB", "hostC", "hostD"}},
	}
	for _, tc := range []struct {
		name string
		r    bool
	}{{"bmgroup_cu", false}, {"bmgroup_cu_r", true}} {
		var b strings.Builder
		if err := WriteComputeUnits(&b, units, tc.r); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, tc.name, b.String())
	}
}

// TestCondenseHosts: bhosts shows a condensed compute unit as one line
// where its first host stood, with its hosts' counts summed; its status
// is ok when one host is, else the one they share, else closed.
func TestCondenseHosts(t *testing.T) {
	host := func(name string, st api.HostState, detail string, max, run int32) *api.Host {
		return &api.Host{Name: name, State: st, StatusDetail: detail, MaxSlots: max, Njobs: run, Run: run}
	}
	ok, closed := api.HostState_HOST_OK, api.HostState_HOST_CLOSED
	hosts := []*api.Host{
		host("hostA", closed, "closed_Full", 4, 4),
		host("hostB", ok, "ok", 4, 1),
		host("hostC", closed, "closed_cu_excl", 4, 0),
		host("hostD", closed, "closed_cu_excl", 4, 2),
		host("hostE", ok, "ok", 8, 0),
		host("hostF", closed, "closed_Adm", 2, 0),
		host("hostG", closed, "closed_Full", 2, 2),
	}
	units := []*api.ComputeUnit{
		{Name: "encl1", Hosts: []string{"hostA", "hostB"}, Condense: true},
		{Name: "encl2", Hosts: []string{"hostC", "hostD"}, Condense: true},
		{Name: "encl3", Hosts: []string{"hostF", "hostG"}, Condense: true},
	}
	var b strings.Builder
	for _, wide := range []bool{false, true} {
		if err := WriteHosts(&b, CondenseHosts(hosts, units), HostsOptions{Wide: wide}); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, "bhosts_condensed", b.String())
	if got := CondenseHosts(hosts, nil); len(got) != len(hosts) {
		t.Errorf("no condensed units: %d hosts, want %d", len(got), len(hosts))
	}
}
