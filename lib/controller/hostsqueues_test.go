package controller

import (
	"slices"
	"strings"
	"testing"

	"xce/lib/api"
	"xce/lib/config"
	"xce/lib/hostload"
	"xce/lib/resreq"
)

const hostsQueuesConfig = `
[cluster]
name = "c1"
default_queue = "normal"

[resources.fast]
type = "boolean"

[resources.lic]
total = 5

[hosts.hostA]
slots = 4
attributes = ["fast"]

[hosts.hostB]
slots = 2

[host_groups.grpA]
members = ["hostA"]

[host_groups.grpB]
members = ["hostB"]

[user_groups.chem]
members = ["alice", "bob"]

[queues.normal]
priority = 30
fairshare = { chem = 2, default = 1 }

[queues.chemq]
priority = 40
hosts = ["grpA"]
users = ["chem"]

[queues.bonly]
priority = 20
hosts = ["hostB"]
users = ["all", "~bob"]
`

func queueNames(qs []*api.Queue) string {
	var n []string
	for _, q := range qs {
		n = append(n, q.Name)
	}
	return strings.Join(n, " ")
}

func TestQueuesForHostAndUser(t *testing.T) {
	c, _ := newTestControllerWith(t, hostsQueuesConfig, 4, -1)
	for _, tc := range []struct {
		host, user, want, err string
	}{
		{"", "", "chemq normal bonly", ""},
		{"hostA", "", "chemq normal", ""},
		{"grpB", "", "normal bonly", ""},
		{"all", "", "chemq normal bonly", ""},
		{"c1", "", "chemq normal bonly", ""},
		{"nosuch", "", "", "nosuch: Bad host name, host group name or cluster name"},
		{"", "alice", "chemq normal bonly", ""},
		{"", "bob", "chemq normal", ""},
		{"", "chem", "chemq normal bonly", ""},
		{"", "all", "normal", ""},
		{"", "nosuchuser_xce", "", "nosuchuser_xce: Unknown user"},
		{"hostB", "bob", "normal", ""},
		{"hostB", "all", "normal", ""},
	} {
		qs, err := c.ListQueues(&api.ListQueuesRequest{Host: tc.host, User: tc.user})
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("-m %q -u %q: error %v, want %q", tc.host, tc.user, err, tc.err)
			}
		case err != nil || queueNames(qs) != tc.want:
			t.Errorf("-m %q -u %q: %q, %v; want %q", tc.host, tc.user, queueNames(qs), err, tc.want)
		}
	}
	if _, err := c.ListQueues(&api.ListQueuesRequest{Names: []string{"chemq"}, Host: "hostB"}); err == nil || err.Error() != "hostB: Host or host group is not used by the queue" {
		t.Errorf("chemq -m hostB: %v", err)
	}
	if _, err := c.ListQueues(&api.ListQueuesRequest{Names: []string{"chemq"}, User: "carol"}); err == nil || err.Error() != "carol: Unknown user" {
		t.Errorf("chemq -u carol: %v", err)
	}
}

func TestParseHostFilter(t *testing.T) {
	conf, err := config.Parse("t.toml", []byte(hostsQueuesConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, err string }{
		{"", ""},
		{"fast", ""},
		{"select[mem > 4GB && slots >= 2] order[-slots:mem]", ""},
		{"type == local && model == any", ""},
		{"rusage[lic=1] span[hosts=1]", ""},
		{"select[", "select[: column 8: "},
		{"nosuch > 1", "nosuch > 1: column 1: "},
		{"order[type]", "order[type]: column 7: order[] sorts by numeric resources"},
		{"2*{select[fast]} + 2*{-}", "2*{select[fast]} + 2*{-}: a compound or alternative requirement does not select hosts. Bad resource requirement syntax."},
	} {
		_, err := parseHostFilter(conf, tc.text, resreq.Local{Type: hostload.DetectedType(), Model: hostload.DetectedModel()})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.text, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err) || !strings.HasSuffix(err.Error(), "Bad resource requirement syntax.")):
			t.Errorf("%q: error %v, want %q...", tc.text, err, tc.err)
		}
	}
}

// The -R filter reads what the scheduler reads: attributes, free slots;
// shared pools carry what running jobs reserve; the share accounts of a
// fairshare queue are its named groups and its users with jobs.
func TestListHostsAndShares(t *testing.T) {
	c, _ := newTestControllerWith(t, hostsQueuesConfig, 4, -1)
	for _, tc := range []struct {
		rr   string
		want int
	}{{"", 1}, {"fast", 1}, {"!fast", 0}, {"slots >= 2", 1}, {"maxslots > 4", 0}, {"hname == hostA", 1}} {
		r, err := c.ListHosts(&api.ListHostsRequest{ResReq: tc.rr})
		if err != nil || len(r.Hosts) != tc.want {
			t.Errorf("-R %q: %d hosts, %v; want %d", tc.rr, len(r.GetHosts()), err, tc.want)
		}
	}
	job, err := c.Submit(alice, &api.JobSpec{Command: "a", ResReq: []string{"rusage[lic=2]"}, MinTasks: 2, MaxTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job running", func() bool { return c.stateOf(job.JobId, 0) == api.JobState_RUN })
	r, err := c.ListHosts(&api.ListHostsRequest{ResReq: "slots >= 3"})
	if err != nil || len(r.Hosts) != 0 {
		t.Errorf("-R slots >= 3 with 2 of 4 slots used: %v, %v", r.GetHosts(), err)
	}
	r, _ = c.ListHosts(&api.ListHostsRequest{})
	if len(r.Shared) != 1 || r.Shared[0].Name != "lic" || r.Shared[0].Total != 5 || r.Shared[0].Reserved != 2 ||
		!slices.Equal(r.Shared[0].Hosts, []string{"hostA"}) {
		t.Errorf("shared %v", r.Shared)
	}
	if h := r.Hosts[0]; h.Njobs != 2 || h.CpuFactor != 1 || !slices.Equal(h.Resources, []string{"fast"}) {
		t.Errorf("host %v", h)
	}
	qs, err := c.ListQueues(&api.ListQueuesRequest{Names: []string{"normal"}, ShareInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	aliceName, _ := lookupUser(alice.UID)
	accts := qs[0].ShareAccounts
	if len(accts) != 2 {
		t.Fatalf("accounts %v", accts)
	}
	var chem, al *api.ShareAccount
	for _, a := range accts {
		switch a.Name {
		case "chem":
			chem = a
		case aliceName:
			al = a
		}
	}
	if chem == nil || !chem.Group || chem.Shares != 2 || chem.Started != 0 || chem.Priority < 0.66 || chem.Priority > 0.67 {
		t.Errorf("chem account %v", chem)
	}
	// alice: 1 share, 2 slots running: 1 / (run*0.7 + 3*3), just under 1/9.
	if al == nil || al.Group || al.Shares != 1 || al.Started != 2 || al.Priority > 1.0/9 || al.Priority < 0.1 {
		t.Errorf("alice's account %v", al)
	}
	if qs, _ := c.ListQueues(&api.ListQueuesRequest{Names: []string{"normal"}}); len(qs[0].ShareAccounts) != 0 {
		t.Errorf("share accounts without share_info")
	}
}

// A host's configured type and model are what lshosts, bhosts -l and
// select[] see; `type == local` means the submission host's type (this
// host's, configured); every load index Linux gives is reported.
func TestConfiguredTypeAndModel(t *testing.T) {
	c, _ := newTestControllerWith(t, `
[hosts.hostA]
slots = 4
type = "LINUXAVX"
model = "EPYC_9654"
`, 4, -1)
	r, err := c.ListHosts(&api.ListHostsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Hosts[0]; h.Type != "LINUXAVX" || h.Model != "EPYC_9654" {
		t.Errorf("type %q model %q, want the configured LINUXAVX and EPYC_9654", h.Type, h.Model)
	}
	if h := r.Hosts[0]; !h.LoadMeasured || h.Pg == nil || h.Io == nil || h.MemKb <= 0 || h.R1M < 0 {
		t.Errorf("load indices not measured: %v", h)
	}
	for _, tc := range []struct {
		rr   string
		want int
	}{{"type == LINUXAVX", 1}, {"type == X86_64", 0}, {"model == EPYC_9654", 1}, {"model == x86_64", 0}, {"type == local", 1}, {"model == local", 1}} {
		r, err := c.ListHosts(&api.ListHostsRequest{ResReq: "select[" + tc.rr + "]"})
		if err != nil || len(r.Hosts) != tc.want {
			t.Errorf("-R select[%s]: %d hosts, %v; want %d", tc.rr, len(r.GetHosts()), err, tc.want)
		}
	}
	job, err := c.Submit(alice, &api.JobSpec{Command: "a", ResReq: []string{"select[model == EPYC_9654 && type == local]"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job selecting the configured model running", func() bool { return c.stateOf(job.JobId, 0) == api.JobState_RUN })
}
