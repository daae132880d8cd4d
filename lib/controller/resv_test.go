package controller

import (
	"testing"
	"time"

	"xce/lib/sched"
)

func TestRsvPolicyLists(t *testing.T) {
	groups := map[string][]string{"chem": {"alice", "bob"}}
	for _, c := range []struct {
		list []string
		name string
		want bool
	}{
		{nil, "x", true}, {[]string{"all"}, "x", true}, {[]string{"chem"}, "bob", true},
		{[]string{"chem", "~bob"}, "bob", false}, {[]string{"all", "~chem"}, "alice", false},
		{[]string{"carol"}, "alice", false},
	} {
		if got := inList(c.list, c.name, groups); got != c.want {
			t.Errorf("inList(%v, %s) = %v", c.list, c.name, got)
		}
	}
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, time.Local)
	w := func(h1, h2 int) sched.Window {
		return sched.Window{Start: day.Add(time.Duration(h1) * time.Hour), End: day.Add(time.Duration(h2) * time.Hour)}
	}
	if !inWindows([]string{"8:00-18:00"}, w(9, 11)) || inWindows([]string{"8:00-18:00"}, w(17, 19)) || !inWindows(nil, w(1, 2)) {
		t.Error("inWindows")
	}
}
