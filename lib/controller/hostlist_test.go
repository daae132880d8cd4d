package controller

import (
	"testing"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/sched"
)

// Real clusters name hosts node01, gpu017 and c3-14: a trailing number is
// part of the name, and only "+N" is a preference level.
const hostNamesConfig = `
[cluster]
name = "c1"
default_queue = "normal"

[hosts.hostA]
slots = 4

[hosts.node01]
slots = 2

[hosts.gpu017]
slots = 2

[hosts.c3-14]
slots = 2

[hosts.host]
slots = 1

[host_groups.group]
members = ["node01", "c3-14"]

[queues.normal]
priority = 30

[queues.pref]
priority = 20
hosts = ["node01+2", "group+1", "others+1"]
`

var hostListTerms = []struct {
	term string
	ok   bool
}{
	{"node01", true},
	{"gpu017", true},
	{"c3-14", true},
	{"host+2", true},
	{"group+1", true},
	{"others+1", true},
	{"all", true},
	{"node01+3", true},
	{"node0", false},
	{"node", false},
	{"c3", false},
	{"gpu017x", false},
	{"node01+x", false},
}

func TestHostListTermsSubmitAndModify(t *testing.T) {
	c, _ := newTestControllerWith(t, hostNamesConfig, 4, -1)
	hold, err := c.Submit(alice, &api.JobSpec{Command: "true", Hosts: []string{"hostA"}, Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range hostListTerms {
		_, err := c.Submit(alice, &api.JobSpec{Command: "true", Hosts: []string{tc.term}, Hold: true})
		if tc.ok != (err == nil) {
			t.Errorf("bsub -m %s: %v, want ok=%v", tc.term, err, tc.ok)
		}
		if err != nil && err.Error() != tc.term+": Bad host name, host group name or cluster name" {
			t.Errorf("bsub -m %s: %q", tc.term, err)
		}
		msg := c.Modify(alice, &api.ModifyRequest{Ref: &api.JobRef{JobId: hold.JobId}, Spec: &api.JobSpec{Hosts: []string{tc.term}}, Fields: []string{"hosts"}}).Results[0].Error
		if tc.ok != (msg == "") {
			t.Errorf("bmod -m %s: %q, want ok=%v", tc.term, msg, tc.ok)
		}
	}
}

func TestHostListTermsQueueHosts(t *testing.T) {
	conf, err := config.Parse("test.toml", []byte(hostNamesConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got := conf.ExpandHosts(conf.Queues["pref"].Hosts); len(got) != 2 || got[0] != "c3-14" || got[1] != "node01" {
		t.Errorf("queue hosts expand to %q, want [c3-14 node01]", got)
	}
	groups := map[string][]string{"group": {"node01", "c3-14"}}
	for _, tc := range []struct {
		list []string
		host string
		want bool
	}{
		{[]string{"node01"}, "node01", true},
		{[]string{"node01"}, "node0", false},
		{[]string{"gpu017"}, "gpu017", true},
		{[]string{"c3-14"}, "c3-14", true},
		{[]string{"c3-14"}, "c3", false},
		{[]string{"host+2"}, "host", true},
		{[]string{"group+1"}, "c3-14", true},
		{[]string{"group+1"}, "gpu017", false},
		{[]string{"all", "~node01"}, "node01", false},
		{[]string{"all", "~node01"}, "gpu017", true},
	} {
		if got := sched.HostListIncludes(tc.list, tc.host, groups); got != tc.want {
			t.Errorf("HostListIncludes(%q, %s) = %v, want %v", tc.list, tc.host, got, tc.want)
		}
	}
}
