package policy

import (
	"testing"

	"xce/lib/api"
)

// LimitUse counts the cluster-wide limits and leaves a queue's per-host
// slot limit to lib/sched: counted over the cluster it capped the
// queue's slots everywhere at the per-host figure, and a job larger than
// one host's share never started.
func TestLimitUse(t *testing.T) {
	perUser := &api.PendLimit{Kind: api.PendLimit_QUEUE_USER_SLOTS, Name: "q", Max: 6, Need: 1, Reason: "user"}
	perHost := &api.PendLimit{Kind: api.PendLimit_QUEUE_HOST_SLOTS, Name: "q", Max: 3, Need: 1, Reason: "host"}
	queue := &api.PendLimit{Kind: api.PendLimit_QUEUE_SLOTS, Name: "q", Max: 10, Need: 1, Reason: "queue"}
	lims := []*api.PendLimit{perUser, perHost, queue}
	for _, c := range []struct {
		name    string
		running map[string]int // user → slots started
		user    string
		need    int
		want    string
	}{
		{"an empty cluster, more than one host's share", nil, "a", 4, ""},
		{"the per-host figure used, on other hosts", map[string]int{"b": 3, "c": 3}, "a", 3, ""},
		{"the user's limit", map[string]int{"a": 4}, "a", 3, "user"},
		{"another user's slots do not count", map[string]int{"b": 6}, "a", 4, ""},
		{"the queue's limit", map[string]int{"b": 4, "c": 4}, "a", 3, "queue"},
		{"exactly at the queue's limit", map[string]int{"b": 4, "c": 4}, "a", 2, ""},
	} {
		u := LimitUse{}
		for user, n := range c.running {
			u.Take(lims, user, n)
		}
		if got := u.Blocked(lims, c.user, c.need); got != c.want {
			t.Errorf("%s: Blocked = %q, want %q", c.name, got, c.want)
		}
	}
}
