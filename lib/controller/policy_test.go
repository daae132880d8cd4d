package controller

import (
	"strings"
	"testing"

	"xce/lib/api"
	"xce/lib/config"
)

const policyConfig = `
[cluster]
default_queue = "normal"
max_user_priority = 100

[queues.normal]

[queues.inter]
interactive = "only"

[queues.batch]
interactive = "no"

[queues.qadm]
administrators = ["qboss"]
`

// TestSubmitUserPriority: bsub -sp 99999999999 arrived as 1215752191 and
// jumped the queue. A user's -sp must lie in 1..max_user_priority (LSF's
// MAX_USER_PRIORITY); without one -sp is off.
func TestSubmitUserPriority(t *testing.T) {
	c, _ := newTestControllerWith(t, policyConfig, 4, 0)
	for _, tt := range []struct {
		prio int32
		ok   bool
	}{{1, true}, {100, true}, {101, false}, {1215752191, false}, {-1, false}} {
		_, err := c.Submit(alice, &api.JobSpec{Command: "true", UserPriority: tt.prio, Hold: true})
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "Bad user priority") {
			t.Errorf("-sp %d: %v", tt.prio, err)
		}
	}
	off, _ := newTestControllerWith(t, "[queues.normal]\n", 4, 0)
	if _, err := off.Submit(alice, &api.JobSpec{Command: "true", UserPriority: 5, Hold: true}); err == nil || !strings.Contains(err.Error(), "Bad user priority") {
		t.Errorf("-sp 5 without max_user_priority: %v", err)
	}
}

// TestCheckUserPriority: the cluster's and the queue's administrators may
// go beyond max_user_priority; nobody may give a negative one.
func TestCheckUserPriority(t *testing.T) {
	conf, err := config.Parse("t.toml", []byte(policyConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		admin       bool
		user, queue string
		prio        int32
		ok          bool
	}{
		{false, "alice", "normal", 0, true},
		{false, "alice", "normal", 100, true},
		{false, "alice", "normal", 101, false},
		{true, "root", "normal", 2147483647, true},
		{true, "root", "normal", -1, false},
		{false, "qboss", "qadm", 5000, true},
		{false, "qboss", "normal", 5000, false},
		{false, "alice", "qadm", 5000, false},
	} {
		err := checkUserPriority(conf, tt.admin, tt.user, &api.JobSpec{Queue: tt.queue, UserPriority: tt.prio})
		if (err == nil) != tt.ok {
			t.Errorf("%+v: %v", tt, err)
		}
	}
}

// TestSubmitInteractiveQueue: a batch job ran in a queue LSF keeps for
// interactive jobs (INTERACTIVE = ONLY). Each queue refuses the kind it
// does not take, with LSF's message.
func TestSubmitInteractiveQueue(t *testing.T) {
	c, _ := newTestControllerWith(t, policyConfig, 4, 0)
	for _, tt := range []struct {
		queue string
		mode  api.Interactive
		want  string
	}{
		{"inter", api.Interactive_BATCH, "Queue only accepts interactive jobs"},
		{"batch", api.Interactive_PLAIN, "Queue does not accept interactive jobs"},
		{"batch", api.Interactive_BATCH, ""},
		{"normal", api.Interactive_BATCH, ""},
	} {
		_, err := c.Submit(alice, &api.JobSpec{Command: "true", Queue: tt.queue, Interactive: tt.mode, Hold: true})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s job in queue %s: %v, want %q", tt.mode, tt.queue, err, tt.want)
		}
	}
}

// TestModifyUserPriority: bmod -sp is held to max_user_priority as bsub
// -sp is.
func TestModifyUserPriority(t *testing.T) {
	c, _ := newTestControllerWith(t, policyConfig, 4, 0)
	r, err := c.Submit(alice, &api.JobSpec{Command: "true", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	mod := func(p int32) string {
		return c.Modify(alice, &api.ModifyRequest{Ref: &api.JobRef{JobId: r.JobId}, Spec: &api.JobSpec{UserPriority: p}, Fields: []string{"user_priority"}}).Results[0].Error
	}
	if got := mod(1000); !strings.Contains(got, "Bad user priority") {
		t.Errorf("bmod -sp 1000 with max_user_priority 100: %q", got)
	}
	if got := mod(50); got != "" {
		t.Errorf("bmod -sp 50: %q", got)
	}
}
