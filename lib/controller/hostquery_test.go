package controller

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"xce/lib/api"
)

// TestHostUnavailAtGrace: a host whose worker left shows unreach, then
// unavail as soon as the grace has passed, whether or not the periodic
// check has moved it (and its jobs) yet.
func TestHostUnavailAtGrace(t *testing.T) {
	c, _ := newTestController(t, 2, -1)
	grace, _ := c.hostTimes()
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hostNamed("hostB")
	h.attrs = &api.Host{Name: "hostB"} // it joined once
	h.lostAt = time.Now().Add(-grace / 2)
	if _, s := c.hostStatus(h); s != "unreach" {
		t.Errorf("within the grace: %s, want unreach", s)
	}
	h.lostAt = time.Now().Add(-grace - time.Millisecond)
	if _, s := c.hostStatus(h); s != "unavail" || h.unavail {
		t.Errorf("past the grace, before the check: %s (checked %v), want unavail", s, h.unavail)
	}
}

// TestListHostsByName: bhosts NAME, which builds the view of the hosts
// named only, shows what the listing of every host shows of them.
func TestListHostsByName(t *testing.T) {
	c, _ := newTestControllerWith(t, testConfig+"\n[resources.lic]\ntotal = 3\n", 4, -1)
	j, err := c.Submit(alice, &api.JobSpec{Command: "a", MinTasks: 2, MaxTasks: 2, ResReq: []string{"rusage[mem=100:lic=1]"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job running", func() bool { return c.stateOf(j.JobId, 0) == api.JobState_RUN })
	c.mu.Lock()
	c.hostNamed("hostB") // another host, not in the view of hostA
	c.mu.Unlock()
	all, err := c.ListHosts(&api.ListHostsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := c.ListHosts(&api.ListHostsRequest{Names: []string{"hostA"}})
	if err != nil {
		t.Fatal(err)
	}
	var want *api.Host
	for _, h := range all.Hosts {
		if h.Name == "hostA" {
			want = h
		}
	}
	if len(one.Hosts) != 1 || want == nil || !proto.Equal(one.Hosts[0], want) {
		t.Fatalf("bhosts hostA:\n%v\nthe full listing's hostA:\n%v", one.Hosts, want)
	}
	if want.Run != 2 || want.Reserved["mem"] != 100 || len(all.Hosts) != 2 {
		t.Errorf("hostA: run %d, reserved %v; want 2 slots and 100 MB (of 2 hosts listed)", want.Run, want.Reserved)
	}
	if len(one.Shared) != 1 || !proto.Equal(one.Shared[0], all.Shared[0]) || one.Shared[0].Reserved != 1 {
		t.Errorf("shared: %v, full listing %v", one.Shared, all.Shared)
	}
}
