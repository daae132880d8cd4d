package config

import (
	"testing"

	"xce/lib/api"
)

// A queue's users list does not bind the cluster's administrators: LSF
// admits them to every queue.
func TestQueueUsersAdmitAdministrators(t *testing.T) {
	cfg, err := Parse("a.toml", []byte(`
[cluster]
administrators = ["lsfadmin", "ops"]
default_queue = "normal"

[user_groups.ops]
members = ["opsuser"]

[queues.normal]

[queues.staff]
users = ["alice"]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user  string
		admin bool // known to the caller as an administrator
		ok    bool
	}{
		{"alice", false, true},
		{"carol", false, false},
		{"lsfadmin", false, true},
		{"opsuser", false, true},
		{"root", true, true},
		{"carol", true, true},
	} {
		_, err := LayerFor(&api.JobSpec{Queue: "staff", User: tc.user, Command: "true"}, cfg, tc.admin)
		if (err == nil) != tc.ok {
			t.Errorf("%s (admin %v) in staff: %v, want ok=%v", tc.user, tc.admin, err, tc.ok)
		}
	}
}
