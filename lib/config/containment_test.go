package config

import (
	"slices"
	"strings"
	"testing"
)

const containmentConfig = `[cluster]
resource_enforce = ["memory", "cpu"]
cgroup_acct = false

[hosts.a]
resource_enforce = []
process_tracking = false

[hosts.b]
resource_enforce = ["cpu"]

[hosts.c]
cgroup_acct = false

[queues.normal]
`

func TestContainment(t *testing.T) {
	c, err := Parse("c.toml", []byte(containmentConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host     string
		pt, acct bool
		enforce  []string
	}{
		// memory enforcement turns cgroup accounting on, as LSF's does.
		{"other", true, true, []string{"memory", "cpu"}},
		{"a", false, false, nil},
		{"b", true, false, []string{"cpu"}},
		{"c", true, true, []string{"memory", "cpu"}},
	}
	for _, tt := range tests {
		got := c.Containment(tt.host)
		if got.ProcessTracking != tt.pt || got.CgroupAcct != tt.acct || !slices.Equal(got.ResourceEnforce, tt.enforce) {
			t.Errorf("%s: %+v, want pt %t acct %t enforce %v", tt.host, got, tt.pt, tt.acct, tt.enforce)
		}
	}
	if !c.Containment("b").Enforces("cpu") || c.Containment("b").Enforces("memory") {
		t.Error("Enforces")
	}

	d := Default("node1", 4).Containment("node1")
	if !d.ProcessTracking || !d.CgroupAcct || d.ResourceEnforce != nil {
		t.Errorf("default: %+v; want tracking and accounting, no enforcement", d)
	}

	text := c.Effective()
	for _, want := range []string{"process_tracking = true\ncgroup_acct = true\nresource_enforce = [\"memory\", \"cpu\"]\n",
		"[hosts.a]\n# slots: one per CPU\nprocess_tracking = false\nresource_enforce = []",
		"[hosts.b]\n# slots: one per CPU\nresource_enforce = [\"cpu\"]", "[hosts.c]\n# slots: one per CPU\ncgroup_acct = false"} {
		if !strings.Contains(text, want) {
			t.Errorf("effective configuration lacks %q:\n%s", want, text)
		}
	}
	c2, err := Parse("effective.toml", []byte(text))
	if err != nil {
		t.Fatalf("effective configuration does not load: %v\n%s", err, text)
	}
	for _, h := range []string{"other", "a", "b", "c"} {
		if a, b := c.Containment(h), c2.Containment(h); a.ProcessTracking != b.ProcessTracking || !slices.Equal(a.ResourceEnforce, b.ResourceEnforce) {
			t.Errorf("%s: round trip %+v, was %+v", h, b, a)
		}
	}
}

func TestContainmentErrors(t *testing.T) {
	tests := []struct{ conf, want string }{
		{"[cluster]\nresource_enforce = [\"memory\", \"disk\"]\n[queues.normal]\n",
			`c.toml:2: cluster.resource_enforce: "disk": expected "memory", "cpu" or "gpu"`},
		{"[cluster]\nresource_enforce = \"memory\"\n[queues.normal]\n",
			`c.toml:2: cluster.resource_enforce: expected`},
		{"[cluster]\nprocess_tracking = \"yes\"\n[queues.normal]\n",
			`c.toml:2: cluster.process_tracking: expected`},
		{"[hosts.h1]\nresource_enforce = [\"cpus\"]\n[queues.normal]\n",
			`c.toml:2: hosts.h1.resource_enforce: "cpus": expected "memory", "cpu" or "gpu"`},
		{"[cluster]\nresource_enforce = [\"cpu\"]\nprocess_tracking = false\n[queues.normal]\n",
			`c.toml:3: cluster.process_tracking: resource_enforce (cpu) needs process_tracking = true`},
		{"[cluster]\nprocess_tracking = false\n[hosts.h1]\nresource_enforce = [\"memory\"]\n[queues.normal]\n",
			`c.toml:4: hosts.h1.resource_enforce: resource_enforce (memory) needs process_tracking = true`},
	}
	for _, tt := range tests {
		_, err := Parse("c.toml", []byte(tt.conf))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error %v; want %q", tt.conf, err, tt.want)
		}
	}
}
