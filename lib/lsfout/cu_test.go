package lsfout

import (
	"strings"
	"testing"

	"xce/lib/api"
)

func TestWriteComputeUnits(t *testing.T) {
	units := []*api.ComputeUnit{
		{Name: "encl1", Type: "enclosure", Members: []string{"hostA", "hg1"}, Hosts: []string{"hostA", "hostB", "hostC"}},
		{Name: "encl2", Type: "enclosure", Members: []string{"hostD"}, Hosts: []string{"hostD"}},
		{Name: "rack1", Type: "rack", Members: []string{"encl1", "encl2"}, Hosts: []string{"hostA", "hostB", "hostC", "hostD"}},
	}
	for _, tc := range []struct {
		name string
		r    bool
	}{{"bmgroup_cu", false}, {"bmgroup_cu_r", true}} {
		var b strings.Builder
		if err := WriteComputeUnits(&b, units, tc.r); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, tc.name, b.String())
	}
}
