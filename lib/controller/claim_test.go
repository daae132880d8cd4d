package controller

import (
	"strings"
	"testing"
	"time"

	"xce/lib/api"
	"xce/lib/config"
)

const claimConfig = `
[cluster]
name = "test"
default_queue = "normal"

[resources.fpga]
instances = true

[hosts.hostA]
instances = { fpga = ["fpga0", "fpga1"] }

[queues.normal]
priority = 30

[user_groups.team]
members = ["carol", "sub"]

[user_groups.sub]
members = ["dave"]
`

// bclaim create checks its requirement, name and options; a claim is
// allocated by a cycle and keeps its instance; only its creator, -u users
// and -g members may submit to it; only its creator or an administrator
// may delete it.
func TestClaimOps(t *testing.T) {
	c, _ := newTestControllerWith(t, claimConfig, 4, 0)
	root := Caller{}
	create := func(who Caller, ci *api.ClaimInfo) string {
		t.Helper()
		r := c.Claims(who, &api.ClaimRequest{Op: api.ClaimRequest_CREATE, Claim: ci})
		return strings.Join(append(r.Messages, r.Errors...), ";")
	}
	for _, bad := range []struct {
		ci   *api.ClaimInfo
		want string
	}{
		{&api.ClaimInfo{Name: "1x", ResReq: "rusage[fpga=1]"}, "Bad claim name"},
		{&api.ClaimInfo{Name: "a"}, "must be specified"},
		{&api.ClaimInfo{Name: "a", ResReq: "select[fpga>0] rusage[fpga=1]"}, "one rusage[] section"},
		{&api.ClaimInfo{Name: "a", ResReq: "rusage[fpga=1||mem=10]"}, "no ||"},
		{&api.ClaimInfo{Name: "a", ResReq: "rusage[nosuch=1]"}, "Bad resource requirement"},
		{&api.ClaimInfo{Name: "a", ResReq: "rusage[fpga=1]", Group: "nogroup"}, "User group does not exist"},
		{&api.ClaimInfo{Name: "a", ResReq: "rusage[fpga=1]", End: time.Now().Add(-time.Hour).Unix()}, "has passed"},
	} {
		if got := create(root, bad.ci); !strings.Contains(got, bad.want) {
			t.Errorf("create %v: %q, want %q", bad.ci, got, bad.want)
		}
	}
	if got := create(root, &api.ClaimInfo{Name: "box", ResReq: "rusage[fpga=1]", Group: "team"}); got != "Claim <box> is created" {
		t.Fatalf("create: %q", got)
	}
	if got := create(root, &api.ClaimInfo{Name: "box", ResReq: "rusage[fpga=1]"}); !strings.Contains(got, "already exists") {
		t.Errorf("create twice: %q", got)
	}
	var ci *api.ClaimInfo
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if l := c.Claims(root, &api.ClaimRequest{}); len(l.Claims) == 1 && l.Claims[0].Host != "" {
			ci = l.Claims[0]
			break
		}
		c.Kick()
	}
	if ci == nil || ci.Host != "hostA" || len(ci.Instances) != 1 || len(ci.Instances[0].Names) != 1 {
		t.Fatalf("claim not allocated: %v", ci)
	}
	conf := c.config()
	for user, want := range map[string]bool{ci.Creator: true, "carol": true, "dave": true, "erin": false} {
		c.mu.Lock()
		err := c.checkClaimJob(conf, &api.JobSpec{Claim: "box", User: user})
		c.mu.Unlock()
		if (err == nil) != want {
			t.Errorf("user %s: %v, want allowed %v", user, err, want)
		}
	}
	if _, err := c.Submit(root, &api.JobSpec{Command: "true", Claim: "nope"}); err == nil || !strings.Contains(err.Error(), "nope: Claim does not exist") {
		t.Errorf("bsub -claim nope: %v", err)
	}
	if r := c.Claims(alice, &api.ClaimRequest{Op: api.ClaimRequest_DELETE, Names: []string{"box"}}); strings.Join(r.Errors, ";") != "box: "+errPermission {
		t.Errorf("delete by another user: %v", r.Errors)
	}
	if r := c.Claims(root, &api.ClaimRequest{Op: api.ClaimRequest_DELETE, Names: []string{"box", "nope"}}); len(r.Messages) != 1 || len(r.Errors) != 1 {
		t.Errorf("delete: %v %v", r.Messages, r.Errors)
	}
	if l := c.Claims(root, &api.ClaimRequest{}); len(l.Claims) != 0 {
		t.Errorf("claims after delete: %v", l.Claims)
	}
}

// A claim's members: its creator, -u users, and -g members through
// subgroups; a group of all lets anyone in.
func TestClaimMembers(t *testing.T) {
	conf, err := config.Parse("x.toml", []byte(claimConfig+"\n[user_groups.everyone]\nmembers = [\"all\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ci := &api.ClaimInfo{Creator: "alice", Users: []string{"bob"}}
	if got := strings.Join(claimMembers(conf, ci), " "); got != "alice bob" {
		t.Errorf("members %q", got)
	}
	ci = &api.ClaimInfo{Creator: "alice", Group: "team"}
	if got := strings.Join(claimMembers(conf, ci), " "); got != "alice carol dave" {
		t.Errorf("members of team %q", got)
	}
	ci.Group = "everyone"
	if claimMembers(conf, ci) != nil || !claimUser(conf, ci, "zed") {
		t.Errorf("a group of all: %v", claimMembers(conf, ci))
	}
}

// bclaim create -e: the claim is removed once its end time passes.
func TestClaimExpires(t *testing.T) {
	c, _ := newTestControllerWith(t, claimConfig, 4, 0)
	end := time.Now().Add(time.Hour)
	r := c.Claims(Caller{}, &api.ClaimRequest{Op: api.ClaimRequest_CREATE, Claim: &api.ClaimInfo{Name: "brief", ResReq: "rusage[fpga=1]", End: end.Unix()}})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	c.expireClaims(end.Add(-time.Second))
	if n := len(c.Claims(Caller{}, &api.ClaimRequest{}).Claims); n != 1 {
		t.Fatalf("%d claims before the end, want 1", n)
	}
	c.expireClaims(end)
	if n := len(c.Claims(Caller{}, &api.ClaimRequest{}).Claims); n != 0 {
		t.Fatalf("%d claims after the end, want 0", n)
	}
	c.mu.Lock()
	m, err := c.store.Meta("claim/")
	c.mu.Unlock()
	if err != nil || len(m) != 0 {
		t.Errorf("the store still has %d claims (%v)", len(m), err)
	}
}
