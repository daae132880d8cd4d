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

// CondenseHosts replaces, for bhosts and bhosts -w, the hosts of each
// condensed compute unit by one line named after the unit (LSF shows
// condensed host groups and compute units so; -l and -X do not condense).
// The line stands where the unit's first listed host stood; its counts
// are its hosts' sums, JL/U is "-". Its status: ok when one of its hosts
// is ok; else the one status all its hosts share (unavail, unreach or,
// with the detail, the same closed_* reason); else closed. A host in two
// condensed units counts in both; a unit none of whose hosts is listed
// has no line.
func CondenseHosts(hosts []*api.Host, units []*api.ComputeUnit) []*api.Host {
	if len(units) == 0 {
		return hosts
	}
	of := map[string][]int{} // host -> condensed units
	for i, u := range units {
		for _, h := range u.GetHosts() {
			of[h] = append(of[h], i)
		}
	}
	lines := make([]*api.Host, len(units))
	var out []*api.Host
	for _, h := range hosts {
		us, ok := of[h.GetName()]
		if !ok {
			out = append(out, h)
			continue
		}
		for _, i := range us {
			l := lines[i]
			if l == nil {
				l = &api.Host{Name: units[i].GetName(), State: h.GetState(), StatusDetail: h.GetStatusDetail()}
				lines[i] = l
				out = append(out, l)
			} else {
				switch {
				case l.State == api.HostState_HOST_OK:
				case h.GetState() == api.HostState_HOST_OK:
					l.State, l.StatusDetail = api.HostState_HOST_OK, "ok"
				case h.GetState() != l.State:
					l.State, l.StatusDetail = api.HostState_HOST_CLOSED, ""
				case h.GetStatusDetail() != l.StatusDetail:
					l.StatusDetail = ""
				}
			}
			l.MaxSlots += h.GetMaxSlots()
			l.Njobs += h.GetNjobs()
			l.Run += h.GetRun()
			l.Ssusp += h.GetSsusp()
			l.Ususp += h.GetUsusp()
			l.Rsv += h.GetRsv()
		}
	}
	return out
}
