package lsfout

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"xce/lib/api"
)

// WriteComputeUnits writes bmgroup -cu: CU_NAME, TYPE and HOSTS, the
// names padded to 13 columns as the host group listing is. A unit of the
// finest type lists its hosts; a coarser unit lists its member units, a
// name ending in "/" standing for a unit, as bmgroup marks a subgroup;
// with recursive (-r) every unit lists all its hosts.
func WriteComputeUnits(w io.Writer, units []*api.ComputeUnit, recursive bool) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-13s %-13s %s\n", "CU_NAME", "TYPE", "HOSTS")
	isUnit := map[string]bool{}
	for _, u := range units {
		isUnit[u.GetName()] = true
	}
	for _, u := range units {
		var members []string
		nested := false
		for _, m := range u.GetMembers() {
			if isUnit[m] {
				nested = true
				members = append(members, m+"/")
			}
		}
		if !nested || recursive {
			members = u.GetHosts()
		}
		fmt.Fprintf(&b, "%-13s %-13s %s\n", u.GetName(), u.GetType(), strings.Join(members, " "))
	}
	return flush(w, &b)
}
