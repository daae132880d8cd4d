package exec

import (
	"testing"

	"xce/lib/api"
)

func TestAffinityFile(t *testing.T) {
	for _, c := range []struct {
		hosts []*api.HostSlots
		want  string
	}{
		{[]*api.HostSlots{{Host: "a", Slots: 2, Cpus: []int32{3, 2}}}, "a 2\na 3\n"},
		// An exclusive job holds every core: shared out among its slots.
		{[]*api.HostSlots{{Host: "a", Slots: 2, Cpus: []int32{0, 1, 2, 3, 4}}, {Host: "b", Slots: 1, Cpus: []int32{0, 1}}},
			"a 0,1\na 2,3,4\nb 0,1\n"},
		{[]*api.HostSlots{{Host: "a", Slots: 3, Cpus: []int32{7}}, {Host: "b", Slots: 1}}, "a 7\na 7\na 7\nb\n"},
	} {
		if got := affinityFile(c.hosts); got != c.want {
			t.Errorf("affinityFile(%v) = %q, want %q", c.hosts, got, c.want)
		}
	}
}
