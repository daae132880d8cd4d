package controller

import (
	"strings"
	"testing"
	"time"

	"xce/lib/api"
)

func TestCheckGroupPath(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"/a", "/a", ""},
		{"/a/b/", "/a/b", ""},
		{"//a//b", "/a/b", ""},
		{" /a_1-x.y ", "/a_1-x.y", ""},
		{"a/b", "", "full path"},
		{"", "", "full path"},
		{"/", "", "root job group"},
		{"///", "", "root job group"},
		{"/a b", "", "Bad job group name"},
		{"/a/b*", "", "Bad job group name"},
	} {
		got, err := CheckGroupPath(c.in)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("CheckGroupPath(%q) = %q, %v; want %q, %q", c.in, got, err, c.want, c.err)
		}
	}
}

// bgadd makes the parents, the limits nest, an implicit group (bsub -g)
// is listed with its jobs and cannot be deleted while they are
// unfinished, and a user may not change another's group.
func TestJobGroupOps(t *testing.T) {
	c, _ := newTestController(t, 1, 0)
	root := Caller{}
	do := func(who Caller, req *api.JobGroupRequest) (string, string) {
		t.Helper()
		r := c.JobGroups(who, req)
		return strings.Join(r.Messages, ";"), strings.Join(r.Errors, ";")
	}
	if msg, errs := do(root, &api.JobGroupRequest{Op: api.JobGroupRequest_ADD, Path: "/a/b", Limited: true, Limit: 5}); msg != "Job group </a/b> was added." || errs != "" {
		t.Fatalf("bgadd: %q %q", msg, errs)
	}
	if _, errs := do(root, &api.JobGroupRequest{Op: api.JobGroupRequest_MODIFY, Path: "/a", Limited: true, Limit: 4}); !strings.Contains(errs, "less than the limit 5 of its subgroup </a/b>") {
		t.Errorf("bgmod below a subgroup's limit: %q", errs)
	}
	if _, errs := do(alice, &api.JobGroupRequest{Op: api.JobGroupRequest_MODIFY, Path: "/a", Limited: true, Limit: 9}); errs != errPermission {
		t.Errorf("bgmod of another's group: %q", errs)
	}
	if _, err := c.Submit(alice, &api.JobSpec{Command: "sleep 60", JobGroup: "/x/y", Hold: true}); err != nil {
		t.Fatal(err)
	}
	list := c.JobGroups(root, &api.JobGroupRequest{})
	var paths []string
	for _, g := range list.Groups {
		paths = append(paths, g.Path)
		if g.Path == "/x" && (!g.Implicit || g.Njobs != 1 || g.Pend != 1) {
			t.Errorf("implicit /x: %v", g)
		}
		if g.Path == "/a/b" && (!g.Limited || g.Limit != 5 || g.Implicit) {
			t.Errorf("/a/b: %v", g)
		}
	}
	if strings.Join(paths, " ") != "/a /a/b /x /x/y" {
		t.Errorf("groups: %q", paths)
	}
	if _, errs := do(root, &api.JobGroupRequest{Op: api.JobGroupRequest_DELETE, Path: "/x"}); !strings.Contains(errs, "unfinished jobs") {
		t.Errorf("bgdel with a pending job: %q", errs)
	}
	if msg, _ := do(root, &api.JobGroupRequest{Op: api.JobGroupRequest_DELETE, Path: "/a"}); msg != "Job group /a is deleted." {
		t.Errorf("bgdel /a: %q", msg)
	}
	if n := len(c.JobGroups(root, &api.JobGroupRequest{}).Groups); n != 2 {
		t.Errorf("%d groups after bgdel /a, want 2", n)
	}
}

// bgadd -gang and bgmod -gang are stored with the group (read back as a
// restart reads them), bgmod -gang keeps the limit, and the snapshot
// carries the gang groups with its jobs' groups.
func TestJobGroupGangStored(t *testing.T) {
	c, _ := newTestController(t, 1, 0)
	root := Caller{}
	r := c.JobGroups(root, &api.JobGroupRequest{Op: api.JobGroupRequest_ADD, Path: "/g", Limited: true, Limit: 6, GangSet: true, Gang: 3})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	r = c.JobGroups(root, &api.JobGroupRequest{Op: api.JobGroupRequest_MODIFY, Path: "/g", GangSet: true, Gang: 2, GangFail: "kill"})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.restoreJobGroups(); err != nil {
		t.Fatal(err)
	}
	g := c.jgroups.groups["/g"]
	if g == nil || g.Gang != 2 || g.GangFail != "kill" || !g.Limited || g.Limit != 6 {
		t.Fatalf("stored group: %v", g)
	}
	snap := c.snapshot(time.Now(), nil)
	if len(snap.GangGroups) != 1 || snap.GangGroups[0].Path != "/g" || snap.GangGroups[0].Size != 2 {
		t.Errorf("snapshot gangs: %v", snap.GangGroups)
	}
}
